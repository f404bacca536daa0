"""The rules a message must meet to be stored, shared by create, edit and preview.

Failures are collected, not raised one by one, so a 422 names every bad field at once.
The rules match what the processor accepts (`core.models.Message.from_document`), so that
nothing the API stores is later rejected at send time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ValidationError

from composer.models import MessageDraft
from core.errors import DocumentError, ValidationFailed
from core.models import CHANNEL_ID, DEFAULT_MISFIRE_GRACE, MAX_TEXT
from core.schedule import recurrence_from_fields, zone
from formatting.slack_text import to_slack

# A send_at this little in the past is still accepted (client clocks and request latency);
# it goes out on the next tick.
SEND_AT_TOLERANCE = timedelta(seconds=60)

# The fields of `scheduled_messages` a caller writes; everything else is the processor's.
MESSAGE_FIELDS = (
    "channel",
    "text",
    "timezone",
    "send_at",
    "expires_at",
    "rrule",
    "dtstart",
    "exdates",
    "misfire_grace_seconds",
    "allow_broadcast",
    "on_ambiguous",
    "working_days",
    "on_non_working_day",
)
_RECURRING_ONLY = ("dtstart", "exdates", "working_days", "on_non_working_day")
_ONE_OFF_ONLY = ("expires_at",)
_ONE_MICROSECOND = timedelta(microseconds=1)


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
    check_channel(problems, "channel", draft.channel)
    check_text(problems, "text", draft.text)
    zone_ok = check_zone(problems, "timezone", draft.timezone)
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


def check_channel(problems: Problems, field: str, channel: str) -> None:
    if not CHANNEL_ID.match(channel):
        problems.add(field, f"{channel!r} is not a Slack conversation id such as C0123ABCD")


def check_text(problems: Problems, field: str, text: str) -> None:
    if not text.strip():
        problems.add(field, "must not be empty")
    elif len(text) > MAX_TEXT:
        problems.add(field, f"has {len(text)} characters; at most {MAX_TEXT}")
    else:
        try:
            to_slack(text)  # what the send will do: refuse now what Slack would refuse then
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


def add_schedule_problem(problems: Problems, exc: DocumentError) -> None:
    """A schedule the processor refuses, as a 422 detail on the field its code names
    (invalid_dtstart, invalid_exdates, invalid_working_days, ...; else rrule)."""
    field = exc.code.removeprefix("invalid_")
    problems.add(field if field in MESSAGE_FIELDS else "rrule", exc.message)


def schedule_fields(draft: MessageDraft) -> dict[str, Any]:
    """The draft as the stored fields `core.schedule` reads."""
    fields = draft.model_dump(exclude_none=True)
    if draft.working_days is not None:
        fields["working_days"] = draft.working_days.model_dump(exclude_none=True)
    return fields


def _content(draft: MessageDraft, recurring: bool) -> dict[str, Any]:
    content: dict[str, Any] = {
        "channel": draft.channel,
        "text": draft.text,
        "timezone": draft.timezone,
        "allow_broadcast": draft.allow_broadcast,
    }
    if draft.on_ambiguous is not None:
        content["on_ambiguous"] = draft.on_ambiguous
    if draft.misfire_grace_seconds is not None:
        content["misfire_grace_seconds"] = draft.misfire_grace_seconds
    elif recurring:
        content["misfire_grace_seconds"] = DEFAULT_MISFIRE_GRACE
    if recurring:
        content["rrule"] = draft.rrule
        content["dtstart"] = draft.dtstart
        if draft.exdates is not None:
            content["exdates"] = list(draft.exdates)
        if draft.working_days is not None:
            content["working_days"] = draft.working_days.model_dump(exclude_none=True)
        if draft.on_non_working_day is not None:
            content["on_non_working_day"] = draft.on_non_working_day
    else:
        content["send_at"] = draft.send_at
        if draft.expires_at is not None:
            content["expires_at"] = draft.expires_at
    return content


def schedule_key(fields: dict[str, Any]) -> tuple[Any, ...]:
    """What decides when a message runs: equal keys mean an edit left the schedule alone."""
    if fields.get("rrule") is None:
        return ("once", fields.get("send_at"))
    working_days = fields.get("working_days")
    return (
        "series",
        fields.get("rrule"),
        fields.get("dtstart"),
        fields.get("timezone") or "UTC",
        tuple(fields.get("exdates") or ()),
        tuple(sorted(working_days.items())) if isinstance(working_days, dict) else working_days,
        fields.get("on_non_working_day"),
    )
