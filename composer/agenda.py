"""`GET /agenda`: every occurrence due in a range, messages and rotation turns alike, sorted
by when it is due. Worked out from the stored documents by the code the send runs
(`core.schedule` for a message's series, with its exdates and working days; `core.rotation`'s
`upcoming_turns` for a rotation, with its skips and away periods), so the agenda shows what
the send would do if nothing changed. Reads only.

Bounded work: at most `MAX_SUBJECTS` messages and as many rotations are read (those due
soonest), at most `MAX_PER_SUBJECT` occurrences of each are listed, and at most `MAX_ITEMS`
items are answered; when a bound is hit the answer's `note` says so (null otherwise).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from google.cloud.firestore_v1.base_query import FieldFilter
from pydantic import BaseModel, Field

from composer.answers import AgendaItem, AgendaPage
from composer.serialize import dump
from composer.validation import Problems
from core import logs
from core.directory import display_names, ids_in_text
from core.documents.messages import MessageField, Status
from core.documents.rotations import RotationField, RotationStatus
from core.errors import DocumentError
from core.models import Message, instant_problem
from core.rotation import Rotation, fill_template, upcoming_turns
from core.runtime import Runtime
from core.schedule import zone
from core.schedule_words import message_schedule_text, rotation_schedule_text
from core.store import MESSAGES, ROTATIONS

DEFAULT_RANGE = timedelta(days=7)
MAX_RANGE = timedelta(days=31)
MAX_SUBJECTS = 500  # messages read, and rotations read, per agenda
MAX_PER_SUBJECT = 100  # occurrences listed of one message or rotation
MAX_ITEMS = 1_000
MAX_Q = 200
# Rotation turns are worked out day by day from today: a range further out than this is
# left without them (and noted), rather than walking years of turns.
MAX_TURN_DAYS = 400
_WAITING = [Status.PENDING.value, Status.RECURRING.value]
_JUST_BEFORE = timedelta(microseconds=1)


class AgendaQuery(BaseModel):
    """`GET /agenda`'s query parameters."""

    start: str | None = Field(
        None, alias="from", description="an ISO-8601 instant with its offset; default now"
    )
    end: str | None = Field(
        None,
        alias="to",
        description="an ISO-8601 instant with its offset, at most 31 days after `from`;"
        " default 7 days after it",
    )
    q: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_Q,
        description="only items whose text, channel, person or their names contain this"
        " (case-insensitive)",
    )


@dataclass(frozen=True)
class Window:
    """The range asked for, [start, end), and the filter."""

    start: datetime
    end: datetime
    q: str | None = None


def window_from(args: Any, now: datetime) -> Window:
    """`from`, `to` and `q` (422 naming each bad one)."""
    problems = Problems()
    start = _instant(problems, "from", args.get("from"))
    end = _instant(problems, "to", args.get("to"))
    q = args.get("q")
    if q is not None and not 1 <= len(q) <= MAX_Q:
        problems.add("q", f"must be 1..{MAX_Q} characters")
    problems.raise_if_any()
    start = start or now
    end = end or start + DEFAULT_RANGE
    if end <= start:
        problems.add("to", "must be after from")
    elif end - start > MAX_RANGE:
        problems.add("to", f"is more than {MAX_RANGE.days} days after from")
    problems.raise_if_any()
    return Window(start, end, q.casefold() if q else None)


def agenda(rt: Runtime, window: Window) -> dict[str, Any]:
    now = rt.clock.now()
    notes: list[str] = []
    items = [*_message_items(rt, window, notes), *_rotation_items(rt, window, now, notes)]
    names = display_names(rt.db, _ids_of(items))  # one batched read for the whole agenda
    for item in items:
        item["names"] = {i: names[i] for i in _item_ids(item) if i in names}
    if window.q is not None:
        items = [item for item in items if _matches(item, window.q)]
    items.sort(key=lambda item: (item["at"], item["kind"], item["id"]))
    if len(items) > MAX_ITEMS:
        items = items[:MAX_ITEMS]
        notes.append(f"only the first {MAX_ITEMS} items are listed; ask for a shorter range.")
    page = AgendaPage(items=[AgendaItem(**item) for item in items], note=" ".join(notes) or None)
    return dump(page)


# --- messages -----------------------------------------------------------------------------


def _message_items(rt: Runtime, window: Window, notes: list[str]) -> Iterator[dict[str, Any]]:
    """The occurrences in the window of every waiting message (pending or recurring; paused
    and cancelled ones send nothing), through the (status, next_run_at) index."""
    query = (
        rt.db.collection(MESSAGES)
        .where(filter=FieldFilter(MessageField.STATUS, "in", _WAITING))
        .where(filter=FieldFilter(MessageField.NEXT_RUN_AT, "<", window.end))
        .order_by(MessageField.NEXT_RUN_AT)
        .limit(MAX_SUBJECTS + 1)
    )
    snaps = list(query.stream())
    if len(snaps) > MAX_SUBJECTS:
        notes.append(f"only the {MAX_SUBJECTS} messages due soonest are listed.")
    for snap in snaps[:MAX_SUBJECTS]:
        data = snap.to_dict() or {}
        try:
            message = Message.from_document(snap.id, data)
            instants = _message_instants(message, data, window)
        except DocumentError as exc:
            logs.warning(
                "agenda left out a message it cannot read", message_id=snap.id, code=exc.code
            )
            continue
        if len(instants) > MAX_PER_SUBJECT:
            instants = instants[:MAX_PER_SUBJECT]
            notes.append(f"message {snap.id}: only its first {MAX_PER_SUBJECT} occurrences.")
        for at in instants:
            yield _message_item(snap.id, data, message, at)


def _message_instants(message: Message, data: dict[str, Any], window: Window) -> list[datetime]:
    """When the message goes out within the window: a series' occurrences from its next run
    on (exdates and working days as the send applies them), a one-off's next run unless it
    expires first. One more than the cap at most, to tell that it was hit."""
    next_run = data.get(MessageField.NEXT_RUN_AT)
    if not isinstance(next_run, datetime):
        return []
    if message.recurrence is None:
        if message.expires_at is not None and next_run > message.expires_at:
            return []
        return [next_run] if window.start <= next_run < window.end else []
    after = max(window.start, next_run) - _JUST_BEFORE
    upcoming = itertools.takewhile(
        lambda at: at < window.end, message.recurrence.occurrences_after(after)
    )
    return list(itertools.islice(upcoming, MAX_PER_SUBJECT + 1))


def _message_item(
    doc_id: str, data: dict[str, Any], message: Message, at: datetime
) -> dict[str, Any]:
    where = _destination(data, (MessageField.USER, MessageField.TEAMS_CONVERSATION))
    return {
        "kind": "message",
        "id": doc_id,
        "at": at,
        "local": at.astimezone(zone(message.timezone)),
        "timezone": message.timezone,
        **where,
        "text": message.text,
        "schedule_text": message_schedule_text(message),
    }


# --- rotations ----------------------------------------------------------------------------


def _rotation_items(
    rt: Runtime, window: Window, now: datetime, notes: list[str]
) -> Iterator[dict[str, Any]]:
    """The turns in the window of every active rotation, as the send would take them from
    the stored order (skips and away periods included); a day everyone is out posts nothing
    and is left out."""
    if window.end <= now:
        return  # turns are worked out from now on: a range in the past has none
    days = (window.end.date() - now.date()).days + 2  # at most one turn a day
    query = (
        rt.db.collection(ROTATIONS)
        .where(filter=FieldFilter(RotationField.STATUS, "==", RotationStatus.ACTIVE.value))
        .where(filter=FieldFilter(RotationField.NEXT_RUN_AT, "<", window.end))
        .order_by(RotationField.NEXT_RUN_AT)
        .limit(MAX_SUBJECTS + 1)
    )
    snaps = list(query.stream())
    if len(snaps) > MAX_SUBJECTS:
        notes.append(f"only the {MAX_SUBJECTS} rotations due soonest are listed.")
    if days > MAX_TURN_DAYS:
        notes.append(f"rotation turns are listed up to {MAX_TURN_DAYS} days ahead only.")
    for snap in snaps[:MAX_SUBJECTS]:
        data = snap.to_dict() or {}
        try:
            rotation = Rotation.from_document(snap.id, data)
        except DocumentError as exc:
            logs.warning(
                "agenda left out a rotation it cannot read", rotation_id=snap.id, code=exc.code
            )
            continue
        turns = upcoming_turns(rotation, now, min(days, MAX_TURN_DAYS))
        listed = 0
        for turn in turns:
            at = rotation.due_at(turn.day)
            if turn.member is None or not window.start <= at < window.end:
                continue
            if listed == MAX_PER_SUBJECT:
                notes.append(f"rotation {snap.id}: only its first {MAX_PER_SUBJECT} turns.")
                break
            listed += 1
            yield _rotation_item(snap.id, data, rotation, turn.day, turn.member)


def _rotation_item(
    doc_id: str, data: dict[str, Any], rotation: Rotation, day: date, member: str
) -> dict[str, Any]:
    at = rotation.due_at(day)
    return {
        "kind": "rotation",
        "id": doc_id,
        "at": at,
        "local": at.astimezone(rotation.tz),
        "timezone": rotation.tz.key,
        **_destination(data, (RotationField.TEAMS_CONVERSATION,)),
        "text": fill_template(rotation.text, member),
        "schedule_text": rotation_schedule_text(rotation),
        "member": member,
    }


# --- shared -------------------------------------------------------------------------------


def _destination(data: dict[str, Any], before_channel: Iterable[str]) -> dict[str, str]:
    """Where the subject posts, by the field the document names it with."""
    for field in (*before_channel, MessageField.CHANNEL):
        value = data.get(field)
        if isinstance(value, str):
            return {str(field): value}
    return {}


def _item_ids(item: dict[str, Any]) -> list[str]:
    """The ids an item shows: where it posts, its member, and mentions in its text."""
    ids = [item.get(f) for f in ("channel", "user", "teams_conversation", "member")]
    return [i for i in ids if isinstance(i, str)] + sorted(ids_in_text(item.get("text")))


def _ids_of(items: list[dict[str, Any]]) -> set[str]:
    return {i for item in items for i in _item_ids(item)}


def _matches(item: dict[str, Any], q: str) -> bool:
    """`q` in the item's text, its ids or their names (case-insensitive)."""
    haystack = [item.get("text") or "", *_item_ids(item), *item["names"].values()]
    return any(q in text.casefold() for text in haystack)


def _instant(problems: Problems, field: str, raw: str | None) -> datetime | None:
    """An ISO-8601 instant with its offset. A `+` that a query string turned into a space
    (an unencoded `+01:00`) is read as the `+` it was."""
    if raw is None:
        return None
    try:
        value = datetime.fromisoformat(raw.replace(" ", "+"))
    except ValueError:
        value = None
    problem = "is not an ISO-8601 instant" if value is None else instant_problem(value)
    if value is not None and value.tzinfo is None:
        problem = "needs its offset (Z or +HH:MM)"
    if problem is not None:
        problems.add(field, f"{raw[:80]!r} {problem}")
        return None
    return value
