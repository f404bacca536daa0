"""A person's Home tab, read from the stored documents and published (views.publish) on
`app_home_opened` and again after each action taken on it.

Listed: the messages they created that are still to be sent (not deleted; pending,
recurring, paused, sending or unconfirmed), soonest first; the rotations they created or are
a member of, with who is up (composer.rotation_up, the send's own turn math); and every
category whose `opt_out_allowed` is true, with their choice (composer.preferences, the API's
reading). A document that cannot be read is listed as such, never fails the tab."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from google.cloud.firestore_v1.base_query import FieldFilter

from composer.preferences import get_preferences
from composer.rotation_up import with_up
from core import logs
from core.documents.messages import WAITING, MessageField, Status
from core.documents.rotations import RotationField
from core.errors import DocumentError
from core.models import USER_ID, Message
from core.platform import Outcome
from core.rotation import Rotation
from core.runtime import Runtime
from core.schedule_words import message_schedule_text, moment_text, rotation_schedule_text
from core.store import MESSAGES, ROTATIONS
from interactions.home_view import (
    MAX_CATEGORIES,
    MAX_MESSAGES,
    MAX_ROTATIONS,
    HomeTab,
    MessageRow,
    RotationRow,
    Toggle,
    home_view,
)
from messages.claim import occurrence_of

# Statuses of a message still to be sent (or settling); the others are over.
LISTED = frozenset({*WAITING, Status.PAUSED, Status.SENDING, Status.UNCONFIRMED})
CANCELLABLE = frozenset({*WAITING, Status.PAUSED})
# At most this many documents are read per list (far more than a tab shows); the count of
# "and N more" is within them.
_READ_LIMIT = 500


def home_opened(rt: Runtime, body: dict[str, Any]) -> None:
    """The Events API's `app_home_opened` (interactions.events_api's EVENTS row, given the
    whole `event_callback` body): the Home tab is published; the Messages tab needs nothing.
    One views.publish, bounded by SLACK_TIMEOUT_SECONDS; a publish that fails is logged
    and the next opening of the tab publishes it again (a publish replaces the whole tab)."""
    event = body.get("event")
    if not isinstance(event, dict) or event.get("tab", "home") != "home":
        return
    user = event.get("user")
    if not isinstance(user, str) or not USER_ID.match(user):
        logs.warning("home tab not published", reason="no user id", user=str(user)[:64])
        return
    publish_home(rt, user)


def publish_home(rt: Runtime, user: str, notice: str | None = None) -> bool:
    """Publish `user`'s Home tab (with `notice` at its top); whether Slack took it."""
    tab = read_tab(rt, user, notice)
    result = rt.slack.publish_view(user, home_view(tab))
    published = result.outcome == Outcome.DELIVERED
    log = logs.info if published else logs.warning
    log(
        "home tab published" if published else "home tab not published",
        user=user,
        messages=len(tab.messages),
        reason=result.code,
    )
    return published


def read_tab(rt: Runtime, user: str, notice: str | None = None) -> HomeTab:
    messages = _message_rows(rt, user)
    rotations = _rotation_rows(rt, user)
    toggles = _toggles(rt, user)
    return HomeTab(
        messages=messages[:MAX_MESSAGES],
        more_messages=max(0, len(messages) - MAX_MESSAGES),
        rotations=rotations[:MAX_ROTATIONS],
        more_rotations=max(0, len(rotations) - MAX_ROTATIONS),
        toggles=toggles[:MAX_CATEGORIES],
        more_toggles=max(0, len(toggles) - MAX_CATEGORIES),
        notice=notice,
    )


def _message_rows(rt: Runtime, user: str) -> list[MessageRow]:
    query = (
        rt.db.collection(MESSAGES)
        .where(filter=FieldFilter(MessageField.CREATED_BY, "==", user))
        .limit(_READ_LIMIT)
    )
    listed = []
    for snap in query.stream():
        data = snap.to_dict() or {}
        if data.get(MessageField.DELETED) is not True and data.get(MessageField.STATUS) in LISTED:
            listed.append((snap.id, data))
    listed.sort(key=lambda item: _due(item[1]))
    return [_message_row(doc_id, data, user) for doc_id, data in listed]


def _due(data: dict[str, Any]) -> float:
    due = data.get(MessageField.NEXT_RUN_AT)
    return due.timestamp() if isinstance(due, datetime) else float("inf")


def _message_row(doc_id: str, data: dict[str, Any], user: str) -> MessageRow:
    status = str(data.get(MessageField.STATUS))
    text = data.get(MessageField.TEXT)
    try:
        message = Message.from_document(doc_id, data)
        schedule = message_schedule_text(message)
        timezone = message.timezone
    except DocumentError as exc:
        schedule, timezone = f"It cannot be read ({exc.code}): {exc.message}", "UTC"
    due = data.get(MessageField.NEXT_RUN_AT)
    if status == Status.PAUSED:
        when = "paused: it sends nothing until resumed"
    elif isinstance(due, datetime):
        when = f"next: {moment_text(due, timezone)}"
    else:
        when = "no next run"
    return MessageRow(
        id=doc_id,
        text=text if isinstance(text, str) else "",
        status=status,
        when=when,
        schedule=schedule,
        cancellable=status in CANCELLABLE,
        occurrence=_occurrence(data) if status in WAITING else None,
        changed_by=_someone_else(data.get(MessageField.UPDATED_BY), user),
    )


def _someone_else(actor: object, user: str) -> str | None:
    """Who changed the message last, when it was not the person (an admin, the page)."""
    return actor if isinstance(actor, str) and actor and actor != user else None


def _occurrence(data: dict[str, Any]) -> datetime | None:
    try:
        return occurrence_of(data)
    except DocumentError:
        return None


def _rotation_rows(rt: Runtime, user: str) -> list[RotationRow]:
    rotations = rt.db.collection(ROTATIONS)
    found: dict[str, dict[str, Any]] = {}
    for where in (
        FieldFilter(RotationField.CREATED_BY, "==", user),
        FieldFilter(RotationField.MEMBERS, "array_contains", user),
    ):
        for snap in rotations.where(filter=where).limit(_READ_LIMIT).stream():
            found[snap.id] = snap.to_dict() or {}
    now = rt.clock.now()
    return [_rotation_row(i, found[i], now) for i in sorted(found, key=lambda i: _name(found[i]))]


def _name(data: dict[str, Any]) -> str:
    name = data.get(RotationField.NAME)
    return name if isinstance(name, str) else ""


def _rotation_row(doc_id: str, data: dict[str, Any], now: datetime) -> RotationRow:
    name = _name(data) or doc_id
    try:
        schedule = rotation_schedule_text(Rotation.from_document(doc_id, data))
    except DocumentError as exc:
        return RotationRow(name, f"It cannot be read ({exc.code}): {exc.message}", "")
    up = with_up(doc_id, data, now).get("up") or {}
    timezone = data.get(RotationField.TIMEZONE) or "UTC"
    words = _up_words(up, timezone)
    return RotationRow(name, f"{schedule} · {data.get(RotationField.STATUS)}", words)


def _up_words(up: dict[str, Any], timezone: str) -> str:
    """Who takes today's turn and the next one, as mentions (Slack shows their names)."""
    words = []
    today, upcoming = up.get("today"), up.get("next")
    if isinstance(today, dict):
        member = today.get("member")
        words.append(f"Today: <@{member}>" if member else "Today: everyone is out")
    if isinstance(upcoming, dict):
        member, when = upcoming.get("member"), moment_text(upcoming["at"], timezone)
        words.append(
            f"Next: <@{member}> on {when}" if member else f"Next: everyone is out on {when}"
        )
    return " · ".join(words) or "No turn is coming up."


def _toggles(rt: Runtime, user: str) -> list[Toggle]:
    answer = get_preferences(rt.db, user)
    opted_out = set(answer["opted_out"])
    return [
        Toggle(c["id"], c["label"], c["id"] in opted_out)
        for c in answer["categories"]
        if c["opt_out_allowed"]
    ]
