"""The rules a rotation must meet to be stored, shared by create and edit.

Failures are collected into one 422 naming every bad field. The last word is the
processor's own reading (`core.rotation.Rotation.from_document`) of exactly what would be
stored, together with the fields the processor keeps on the document: what the API accepts
is what the send can take turns with, and `next_run_at` comes from the same math.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from composer.models import AwayPeriod, RotationDraft
from composer.validation import Problems, check_actions, check_channel, check_zone
from core.documents.rotations import RotationField
from core.errors import DocumentError, ValidationFailed
from core.models import MAX_TEXT, TEAMS_CONVERSATION_ID, TEAMS_USER_ID, USER_ID
from core.platform import SLACK, TEAMS
from core.rotation import LOCAL_DATE, SEND_TIME, Rotation, fill_template
from rotations.render import render_turn

# The fields of `rotations` a caller writes; everything else (`last_processed_date`,
# `lease`, `rollback`, `attempts`, `next_run_at`, `last_error`, `last_*`, `sent_count`) is
# the processor's, and an edit leaves it as it is.
ROTATION_FIELDS = tuple(
    field.value
    for field in (
        RotationField.NAME,
        RotationField.CHANNEL,
        RotationField.TEAMS_CONVERSATION,
        RotationField.MEMBERS,
        RotationField.TIMEZONE,
        RotationField.SEND_TIME,
        RotationField.WEEKDAYS,
        RotationField.TEXT,
        RotationField.CURSOR,
        RotationField.STATUS,
        RotationField.SKIPS,
        RotationField.AWAY,
        RotationField.WORKING_DAYS,
        RotationField.ON_AMBIGUOUS,
        RotationField.ACTIONS,
    )
)
MAX_NAME = 200
# A member's id on each platform, what a 422 calls it, and the longest-mention stand-in a
# rotation's text is checked with when no member has a valid id.
_MEMBER_IDS = {
    SLACK: (USER_ID, "a Slack user id such as U0123ABCD", "U00000000"),
    TEAMS: (TEAMS_USER_ID, "a Teams user id such as 29:1a2b…", "29:0"),
}


@dataclass(frozen=True)
class RotationPlan:
    """A valid rotation: the caller-written fields to store (absent optional ones omitted)
    and when its next open turn is due."""

    content: dict[str, Any]
    rotation: Rotation  # the processor's reading of it
    next_run_at: datetime | None


def check_rotation(
    draft: RotationDraft, rotation_id: str, now: datetime, kept: Mapping[str, Any] | None = None
) -> RotationPlan:
    """Validate `draft`, read with the processor-owned fields `kept` from the stored
    document (an edit) or none (a create)."""
    problems = Problems()
    if not draft.name.strip() or len(draft.name) > MAX_NAME:
        problems.add("name", f"must be 1..{MAX_NAME} characters and not blank")
    platform = _check_destination(problems, draft)
    check_zone(problems, "timezone", draft.timezone)
    _check_members(problems, draft.members, platform)
    if not SEND_TIME.match(draft.send_time):
        problems.add("send_time", f"{draft.send_time!r} is not a local time HH:MM")
    _check_weekdays(problems, draft.weekdays)
    if draft.members and not 0 <= draft.cursor < len(draft.members):
        problems.add("cursor", f"must be an index into members (0..{len(draft.members) - 1})")
    if draft.skips is not None:
        _check_skips(problems, draft.skips, draft.members)
    for index, period in enumerate(draft.away or ()):
        _check_away(problems, f"away.{index}", period, draft.members)
    _check_text(problems, draft.text, draft.members, platform)
    if not problems.details:
        # The buttons as a message's, on the day's post with the longest mention.
        longest = fill_template(draft.text, _longest(draft.members, platform))
        check_actions(problems, draft.actions, longest, platform)
    problems.raise_if_any()

    content = draft.model_dump(exclude_none=True)
    try:
        rotation = Rotation.from_document(rotation_id, {**(kept or {}), **content})
    except DocumentError as exc:
        raise invalid_document(exc) from None
    next_run_at = rotation.next_due_at(now)
    if next_run_at is None:
        # A rotation that is never due is a mistake (weekend days only, with a calendar
        # that makes them all days off); say so rather than store something silent.
        field = "working_days" if draft.working_days is not None else "weekdays"
        problems.add(field, "leaves no turn day within the next year")
        problems.raise_if_any()
    return RotationPlan(content, rotation, next_run_at)


def invalid_document(exc: DocumentError) -> ValidationFailed:
    """A 422 for the processor's refusal, on the field its code names (`invalid_skips` ->
    `skips`), with the code itself."""
    field = exc.code.removeprefix("invalid_")
    detail = {"field": field, "message": exc.message, "code": exc.code}
    return ValidationFailed(f"invalid fields: {field}", [detail])


def pruned_skips(skips: object, members: list[str]) -> object:
    """Stored skips without the members an edit removed (and without dates left empty), so
    removing a member does not also require editing their days off. Anything not shaped
    like skips is returned as it is, for validation to report."""
    if not isinstance(skips, dict):
        return skips
    kept = {
        day: [m for m in out if m in members] if isinstance(out, list) else out
        for day, out in skips.items()
    }
    return {day: out for day, out in kept.items() if out != []}


def _check_destination(problems: Problems, draft: RotationDraft) -> str:
    """A rotation posts to a Slack `channel` or a `teams_conversation`, exactly one; the
    platform it names (Slack when it names none)."""
    if draft.teams_conversation is None:
        if draft.channel is None:
            problems.add("channel", "channel (Slack) or teams_conversation (Teams) is required")
        else:
            check_channel(problems, "channel", draft.channel)
        return SLACK
    if draft.channel is not None:
        for field in ("channel", "teams_conversation"):
            problems.add(field, "a rotation names channel or teams_conversation, not both")
    elif not TEAMS_CONVERSATION_ID.match(draft.teams_conversation):
        problems.add(
            "teams_conversation",
            f"{draft.teams_conversation[:80]!r} is not a Teams conversation id",
        )
    return TEAMS


def _check_members(problems: Problems, members: list[str], platform: str) -> None:
    if not members:
        problems.add("members", "needs at least one member")
    pattern, shape, _ = _MEMBER_IDS[platform]
    for index, member in enumerate(members):
        if not pattern.match(member):
            problems.add(f"members.{index}", f"{member[:80]!r} is not {shape}")
    if len(set(members)) != len(members):
        problems.add("members", "lists a member more than once")


def _check_weekdays(problems: Problems, weekdays: list[int]) -> None:
    if not weekdays:
        problems.add("weekdays", "needs at least one day (0 = Monday ... 6 = Sunday)")
    if any(not 0 <= day <= 6 for day in weekdays):
        problems.add("weekdays", "days are 0 (Monday) to 6 (Sunday)")
    if len(set(weekdays)) != len(weekdays):
        problems.add("weekdays", "lists a day more than once")


def _check_skips(problems: Problems, skips: dict[str, list[str]], members: list[str]) -> None:
    for day, out in skips.items():
        field = f"skips.{day}"
        if not _is_local_date(day):
            problems.add(field, f"{day!r} is not a local date YYYY-MM-DD")
        unknown = [member for member in out if member not in members]
        if unknown:
            problems.add(field, f"{', '.join(unknown)} not in members")
        if len(set(out)) != len(out):
            problems.add(field, "lists a member more than once")


def _check_away(problems: Problems, field: str, period: AwayPeriod, members: list[str]) -> None:
    if period.member not in members:
        problems.add(f"{field}.member", f"{period.member[:80]!r} is not in members")
    dates = [_is_local_date(period.first), _is_local_date(period.last)]
    for name, text, ok in zip(("from", "to"), (period.first, period.last), dates, strict=True):
        if not ok:
            problems.add(f"{field}.{name}", f"{text[:80]!r} is not a local date YYYY-MM-DD")
    if all(dates) and period.first > period.last:
        problems.add(f"{field}.to", f"{period.last} is before from ({period.first})")


def pruned_away(away: object, members: list[str]) -> object:
    """Stored away periods without those of the members an edit removed, as `pruned_skips`
    does for skips; anything not shaped like a list is returned as it is."""
    if not isinstance(away, list):
        return away
    return [p for p in away if not isinstance(p, dict) or p.get("member") in members]


def _is_local_date(text: str) -> bool:
    if not LOCAL_DATE.match(text):
        return False
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _check_text(problems: Problems, text: str, members: list[str], platform: str) -> None:
    if not text.strip():
        problems.add("text", "must not be empty")
        return
    if len(text) > MAX_TEXT:
        problems.add("text", f"has {len(text)} characters; at most {MAX_TEXT}")
        return
    # Render it as a turn is posted, with the longest mention: refuse now what the send
    # (or Slack) would refuse then.
    try:
        render_turn(text, _longest(members, platform), platform)
    except DocumentError as exc:
        problems.add("text", exc.message)


def _longest(members: list[str], platform: str) -> str:
    pattern, _, default = _MEMBER_IDS[platform]
    return max((m for m in members if pattern.match(m)), key=len, default=default)
