"""The rules a message must meet to be stored, shared by create, edit and preview.

Failures are collected, not raised one by one, so a 422 names every bad field at once.
The rules match what the processor accepts (`core.models.Message.from_document`), so that
nothing the API stores is later rejected at send time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from composer.models import ActionDraft, MessageDraft
from core.actions import RESERVED, Action
from core.documents.messages import MessageField, MessageWrite
from core.documents.write import UNSET, Unset
from core.errors import DocumentError, ValidationFailed
from core.models import (
    CHANNEL_ID,
    DEFAULT_MISFIRE_GRACE,
    MAX_TEXT,
    TEAMS_CONVERSATION_ID,
    TEAMS_USER_ID,
    USER_ID,
)
from core.platform import SLACK, TEAMS
from core.rules import parse_rule
from core.schedule import recurrence_from_fields, zone
from core.store import is_document_id
from formatting.render import render, with_actions

# A send_at this little in the past is still accepted (client clocks and request latency);
# it goes out on the next tick.
SEND_AT_TOLERANCE = timedelta(seconds=60)

# The fields of `scheduled_messages` a caller writes; everything else is the processor's.
MESSAGE_FIELDS = tuple(
    field.value
    for field in (
        MessageField.CHANNEL,
        MessageField.USER,
        MessageField.TEAMS_CONVERSATION,
        MessageField.CATEGORY,
        MessageField.TEXT,
        MessageField.TIMEZONE,
        MessageField.SEND_AT,
        MessageField.EXPIRES_AT,
        MessageField.RRULE,
        MessageField.DTSTART,
        MessageField.EXDATES,
        MessageField.MISFIRE_GRACE_SECONDS,
        MessageField.ALLOW_BROADCAST,
        MessageField.ON_AMBIGUOUS,
        MessageField.WORKING_DAYS,
        MessageField.ON_NON_WORKING_DAY,
        MessageField.ACTIONS,
        MessageField.ONE_ANSWER,
    )
)
_RECURRING_ONLY = (
    MessageField.DTSTART.value,
    MessageField.EXDATES.value,
    MessageField.WORKING_DAYS.value,
    MessageField.ON_NON_WORKING_DAY.value,
)
_ONE_OFF_ONLY = (MessageField.EXPIRES_AT.value,)
_ONE_MICROSECOND = timedelta(microseconds=1)
_ANY_START = datetime(2000, 1, 1)
T = TypeVar("T")


class Problems:
    """Collects `{"field", "message"}` details; raises them together as one 422."""

    def __init__(self) -> None:
        self.details: list[dict[str, Any]] = []

    def add(self, field: str, message: str) -> None:
        self.details.append({"field": field, "message": message})

    def raise_if_any(self) -> None:
        if self.details:
            fields = ", ".join(dict.fromkeys(d["field"] for d in self.details))
            raise ValidationFailed(f"invalid fields: {fields}", self.details)


def whole_number(problems: Problems, field: str, raw: str | None, high: int, default: int) -> int:
    """A query parameter that must be a whole number from 1 to `high`: ASCII digits only
    (`²` passes str.isdigit) and few of them (int() refuses thousands)."""
    if raw is None:
        return default
    if re.fullmatch(r"[0-9]{1,9}", raw) and 1 <= int(raw) <= high:
        return int(raw)
    problems.add(field, f"must be an integer from 1 to {high}, got {raw[:20]!r}")
    return default


def validated(model: type[BaseModel], data: dict[str, Any]) -> Any:
    """`data` (a stored document merged with an edit) as `model`, or a 422 naming each
    field that does not fit; the same shape errors a request body would get."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = Problems()
        for err in exc.errors():
            problems.add(".".join(str(p) for p in err["loc"]) or "body", err["msg"])
        problems.raise_if_any()
        raise  # unreachable: a ValidationError always has errors


@dataclass(frozen=True)
class MessagePlan:
    """A valid message: what to store, and when it first runs."""

    content: dict[str, Any]  # the caller-written fields to store; absent ones are omitted
    recurring: bool
    first_run: datetime | None  # None when the schedule was not (re)computed


def check_message(draft: MessageDraft, now: datetime, *, schedule_from_now: bool) -> MessagePlan:
    """Validate `draft`. With `schedule_from_now` (a create, or an edit that changes the
    schedule) the schedule must also lie ahead of `now`, and `first_run` is computed."""
    problems = Problems()
    platform = check_recipient(problems, draft.channel, draft.user, draft.teams_conversation)
    check_category_id(problems, draft.category, platform, draft.user)
    check_text(problems, "text", draft.text, platform)
    zone_ok = check_zone(problems, "timezone", draft.timezone)
    check_actions(problems, draft.actions, draft.text, platform)
    if draft.one_answer and not draft.actions:
        problems.add("one_answer", "is only for a message with actions")
    recurring = draft.rrule is not None
    if draft.send_at is not None and recurring:
        problems.add("send_at", "a message has send_at (one-off) or rrule (recurring), not both")
    elif draft.send_at is None and not recurring:
        problems.add("send_at", "send_at (one-off) or rrule (recurring) is required")
    first_run: datetime | None = None
    if recurring:
        _forbid(problems, draft, _ONE_OFF_ONLY, "is only for one-off messages (with send_at)")
        if draft.dtstart is None:
            problems.add("dtstart", "a recurring message needs dtstart (local YYYY-MM-DDTHH:MM)")
            if zone_ok and draft.rrule is not None:
                _check_rule(problems, draft.rrule, draft.timezone)
        elif zone_ok and draft.rrule is not None:
            first_run = _first_occurrence(problems, draft, now, schedule_from_now)
    elif draft.send_at is not None:
        _forbid(problems, draft, _RECURRING_ONLY, "is only for recurring messages (with rrule)")
        if schedule_from_now and draft.send_at < now - SEND_AT_TOLERANCE:
            problems.add("send_at", f"{draft.send_at.isoformat()} is in the past")
        if draft.expires_at is not None and draft.expires_at <= draft.send_at:
            problems.add("expires_at", "must be after send_at")
        first_run = draft.send_at if schedule_from_now else None
    problems.raise_if_any()
    return MessagePlan(_content(draft, recurring), recurring, first_run)


def check_actions(
    problems: Problems, actions: list[ActionDraft] | None, text: str, platform: str = SLACK
) -> None:
    """Action ids are unique (what a click names), and a post of `text` (Markdown) with the
    buttons is one `platform` takes (formatting.render.with_actions: on Slack, it fits in
    the blocks), and none is a reserved id (core.actions.RESERVED: the mute button's).
    Messages and rotations alike."""
    ids = [action.id for action in actions or ()]
    for action_id in sorted({i for i in ids if i in RESERVED}):
        problems.add("actions", f"action id {action_id!r} is reserved")
    for action_id in sorted({i for i in ids if ids.count(i) > 1}):
        problems.add("actions", f"action id {action_id!r} is used more than once")
    if ids and not problems.details:
        try:
            with_actions(render(platform, text), "preview", stored_actions(actions))
        except DocumentError as exc:
            problems.add("actions", exc.message)


def stored_actions(actions: list[ActionDraft] | None) -> tuple[Action, ...]:
    return tuple(Action(a.id, a.label, a.style) for a in actions or ())


def check_recipient(
    problems: Problems, channel: str | None, user: str | None, teams: str | None = None
) -> str:
    """A message names a `channel`, a `user` (sent a direct message) or a
    `teams_conversation`, exactly one; the platform it names (Slack when it names none)."""
    if teams is not None:
        person = user is not None and TEAMS_USER_ID.match(user)
        slack = ((MessageField.CHANNEL, channel), (MessageField.USER, None if person else user))
        named = [field for field, value in slack if value is not None]
        for field in (*named, MessageField.TEAMS_CONVERSATION) if named else ():
            problems.add(field.value, "names teams_conversation or channel/user, not both")
        if not named and not TEAMS_CONVERSATION_ID.match(teams):
            problems.add("teams_conversation", f"{teams[:80]!r} is not a Teams conversation id")
        return TEAMS
    if user is not None and TEAMS_USER_ID.match(user):
        problems.add("user", "a Teams user id goes with the teams_conversation of their chat")
        return SLACK
    if channel is not None and user is not None:
        for field in (MessageField.CHANNEL, MessageField.USER):
            problems.add(field.value, "a message names channel or user, not both")
    elif user is not None:
        if not USER_ID.match(user):
            problems.add("user", f"{user!r} is not a Slack user id such as U0123ABCD")
    elif channel is not None:
        check_channel(problems, "channel", channel)
    else:
        problems.add(
            "channel",
            "channel (a conversation), user (a person) or teams_conversation is required",
        )
    return SLACK


def check_category_id(
    problems: Problems, category: str | None, platform: str, user: str | None = None
) -> None:
    """A `category` is a category id. On Teams it needs the person whose gates it passes:
    `user`, their Teams id, beside their personal chat (docs/api.md, "Microsoft Teams
    destinations"); a channel names no person."""
    if category is None:
        return
    if not is_document_id(category):
        problems.add("category", f"{category[:80]!r} cannot be a category id")
    elif platform == TEAMS and user is None:
        problems.add(
            "category",
            "on Teams a category needs user: the Teams id of the person whose personal chat"
            " teams_conversation is (their gates apply)",
        )


def check_channel(problems: Problems, field: str, channel: str) -> None:
    if not CHANNEL_ID.match(channel):
        problems.add(field, f"{channel!r} is not a Slack conversation id such as C0123ABCD")


def check_text(problems: Problems, field: str, text: str, platform: str = SLACK) -> None:
    if not text.strip():
        problems.add(field, "must not be empty")
    elif len(text) > MAX_TEXT:
        problems.add(field, f"has {len(text)} characters; at most {MAX_TEXT}")
    else:
        try:
            # What the send will do: refuse now what the platform would refuse then.
            render(platform, text)
        except DocumentError as exc:
            problems.add(field, exc.message)


def check_zone(problems: Problems, field: str, name: str) -> bool:
    try:
        zone(name)
    except DocumentError as exc:
        problems.add(field, exc.message)
        return False
    return True


def _forbid(problems: Problems, draft: MessageDraft, names: tuple[str, ...], why: str) -> None:
    for name in names:
        if getattr(draft, name) is not None:
            problems.add(name, why)


def _first_occurrence(
    problems: Problems, draft: MessageDraft, now: datetime, schedule_from_now: bool
) -> datetime | None:
    try:
        # The processor's own reading of a stored series: what is accepted here is sent.
        recurrence = recurrence_from_fields(schedule_fields(draft))
        if not schedule_from_now or recurrence is None:
            return None
        first = recurrence.next_after(now - _ONE_MICROSECOND)
    except DocumentError as exc:
        add_schedule_problem(problems, exc)
        return None
    if first is None:
        problems.add("rrule", "has no occurrence at or after now")
    return first


def _check_rule(problems: Problems, body: str, timezone: str) -> None:
    """The rule's own problems when there is no dtstart to read it from (a schedule typed
    as words is a rule problem, not only a missing start). A rule's parts do not depend on
    its start, so any start reads them."""
    try:
        parse_rule(body, _ANY_START, zone(timezone))
    except DocumentError as exc:
        problems.add("rrule", exc.message)


def add_schedule_problem(problems: Problems, exc: DocumentError) -> None:
    """A schedule the processor refuses, as a 422 detail on the field its code names
    (invalid_dtstart, invalid_exdates, invalid_working_days, ...; else rrule)."""
    field = exc.code.removeprefix("invalid_")
    problems.add(field if field in MESSAGE_FIELDS else "rrule", exc.message)


def schedule_fields(draft: MessageDraft) -> dict[str, Any]:
    """The draft as the stored fields `core.schedule` reads."""
    fields = draft.model_dump(exclude_none=True)
    if draft.working_days is not None:
        fields[MessageField.WORKING_DAYS.value] = draft.working_days.model_dump(exclude_none=True)
    return fields


def _content(draft: MessageDraft, recurring: bool) -> dict[str, Any]:
    grace = draft.misfire_grace_seconds
    if grace is None and recurring:
        grace = DEFAULT_MISFIRE_GRACE
    content = MessageWrite(
        channel=_given(draft.channel),
        user=_given(draft.user),
        teams_conversation=_given(draft.teams_conversation),
        category=_given(draft.category),
        text=draft.text,
        timezone=draft.timezone,
        allow_broadcast=draft.allow_broadcast,
        on_ambiguous=_given(draft.on_ambiguous),
        misfire_grace_seconds=_given(grace),
        actions=UNSET if draft.actions is None else _actions_document(draft),
        one_answer=True if draft.one_answer else UNSET,
    )
    if not recurring:
        return (
            replace(content, send_at=_given(draft.send_at), expires_at=_given(draft.expires_at))
        ).to_document()
    working_days = draft.working_days
    return replace(
        content,
        rrule=_given(draft.rrule),
        dtstart=_given(draft.dtstart),
        exdates=UNSET if draft.exdates is None else list(draft.exdates),
        working_days=UNSET if working_days is None else working_days.model_dump(exclude_none=True),
        on_non_working_day=_given(draft.on_non_working_day),
    ).to_document()


def _actions_document(draft: MessageDraft) -> list[dict[str, Any]]:
    return [action.model_dump(exclude_none=True) for action in draft.actions or ()]


def _given(value: T | None) -> T | Unset:
    """An optional draft field as a write: absent (not written) when not given."""
    return UNSET if value is None else value


def schedule_key(fields: dict[str, Any]) -> tuple[Any, ...]:
    """What decides when a message runs: equal keys mean an edit left the schedule alone."""
    if fields.get(MessageField.RRULE) is None:
        return ("once", fields.get(MessageField.SEND_AT))
    working_days = fields.get(MessageField.WORKING_DAYS)
    return (
        "series",
        fields.get(MessageField.RRULE),
        fields.get(MessageField.DTSTART),
        fields.get(MessageField.TIMEZONE) or "UTC",
        tuple(fields.get(MessageField.EXDATES) or ()),
        tuple(sorted(working_days.items())) if isinstance(working_days, dict) else working_days,
        fields.get(MessageField.ON_NON_WORKING_DAY),
    )
