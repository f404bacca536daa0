"""Domain types shared by every domain: the stored scheduled message as the processor reads
it, and ledger identities. (Statuses, leases and field names: core.documents.)"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from typing import Any

from core.actions import Action, catalog
from core.documents.messages import MessageField
from core.documents.people import NO_HOLDS, Holds
from core.documents.subjects import SubjectField
from core.errors import DocumentError
from core.platform import SLACK, TEAMS, Destination
from core.schedule import Recurrence, recurrence_from_fields, zone

MAX_TEXT = 40_000
# Slack ids: a type letter and uppercase letters and digits, at most MAX_SLACK_ID characters
# (Slack's are 9 to 11 today: room to grow, and far inside Firestore's 1,500-byte document id,
# where a person's id and a channel's end up: `people/{user}`, pacing slots).
MAX_SLACK_ID = 32
# A conversation (`C…`, `G…`, `D…`) and a person (a Slack user id, `U…`, or `W…` on
# Enterprise Grid, sent to as a direct message), as the API's models declare them.
CHANNEL_PATTERN = rf"^[CGD][A-Z0-9]{{2,{MAX_SLACK_ID - 1}}}$"
USER_PATTERN = rf"^[UW][A-Z0-9]{{2,{MAX_SLACK_ID - 1}}}$"
# Matched whole (`\Z`, not `$`, which also allows a trailing newline).
CHANNEL_ID = re.compile(r"\A" + CHANNEL_PATTERN[1:-1] + r"\Z")
USER_ID = re.compile(r"\A" + USER_PATTERN[1:-1] + r"\Z")
# A Teams conversation id (`19:…@thread.tacv2`, `a:1…`, `19:…@thread.v2`): Bot Framework
# gives no grammar, so anything a `teams_conversations` document id can be (no `/`, no
# whitespace) and short enough for a pacing slot's id.
TEAMS_CONVERSATION_ID = re.compile(r"\A[^/\s]{1,500}\Z")
# A Teams user (a rotation's member): their Bot Framework id (`29:…`) or Entra object id.
TEAMS_USER_ID = re.compile(
    r"\A(?:29:[A-Za-z0-9_.:\-]{1,400}|[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12})\Z"
)
# A `categories` id as a message names it: a document id (no `/`, not `.`/`..`/`__…__`).
CATEGORY_ID = re.compile(r"\A(?!\.{1,2}\Z)(?!__.*__\Z)[^/]{1,200}\Z", re.DOTALL)
DEFAULT_MISFIRE_GRACE = 3600
# A year: later than that an occurrence is not "late" any more (and the value stays far
# inside Firestore's int64 and timedelta's range).
MAX_MISFIRE_GRACE = 366 * 24 * 3600
# The instants a message or a pass may name (`send_at`, `expires_at`, `next_run_at`, the
# tick's `now`): any real schedule fits, and they stay far enough from datetime's years 1 and
# 9999 that what a pass computes from them (leases, backoffs, a day's margin in any zone,
# local times in +14:00 or -12:00) never overflows.
EARLIEST_INSTANT = datetime(1970, 1, 1, tzinfo=UTC)
LATEST_INSTANT = datetime(9000, 1, 1, tzinfo=UTC)


def instant_problem(value: object) -> str | None:
    """Why `value` is not a usable instant (None: it is one): an aware datetime from
    EARLIEST_INSTANT up to (not including) LATEST_INSTANT."""
    if not isinstance(value, datetime) or value.tzinfo is None:
        return f"{value!r} is not a timestamp with an offset"
    try:
        utc = value.astimezone(UTC)
    except OverflowError:
        utc = None
    if utc is None or not EARLIEST_INSTANT <= utc < LATEST_INSTANT:
        return (
            f"{value.isoformat()} is outside the supported range "
            f"{EARLIEST_INSTANT.isoformat()} to {LATEST_INSTANT.isoformat()} (exclusive)"
        )
    return None


def check_instant(value: object, field: str) -> datetime:
    """`value`, a usable instant; else DocumentError `invalid_<field>`."""
    problem = instant_problem(value)
    if problem is not None or not isinstance(value, datetime):
        raise DocumentError(f"invalid_{field}", f"{field}: {problem}")
    return value


def format_instant(instant: datetime) -> str:
    """A compact UTC stamp for ids; sub-second precision only when there is some, so two
    occurrences in one second never share a ledger entry."""
    if instant.microsecond:
        return instant.strftime("%Y%m%dT%H%M%S.%fZ")
    return instant.strftime("%Y%m%dT%H%M%SZ")


def message_delivery_id(message_id: str, occurrence_at: datetime) -> str:
    """The ledger id of one occurrence of one message: the same inputs always give the same
    id, which is what lets Firestore refuse a second claim of it."""
    return f"m:{message_id}:{format_instant(occurrence_at)}"


def event_id(key: str) -> str:
    """An event's `events` id: the sha256 of its key, hex (any key fits a document id)."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def event_delivery_id(event: str) -> str:
    """The ledger id of an event's one send, from its `events` id: `e:<sha256 of key>`."""
    return f"e:{event}"


def rotation_delivery_id(rotation_id: str, day: date) -> str:
    """The ledger id of one rotation day: a second claim of that day fails to create it."""
    return f"r:{rotation_id}:{day.isoformat()}"


@dataclass(frozen=True)
class Message:
    """A stored scheduled message, validated for sending. It names a `channel` or a `user`
    (exactly one); a message to a person gets its `channel` once the bot has opened their
    DM (`to_dm`), which is where it posts."""

    id: str
    channel: str | None
    text: str
    timezone: str
    recurrence: Recurrence | None
    misfire_grace_seconds: int
    allow_broadcast: bool = False
    # One-offs only: not sent after this instant (the message ends `failed`, code `expired`).
    expires_at: datetime | None = None
    user: str | None = None  # a person's Slack user id: the message is their DM
    category: str | None = None  # a `categories` id: the person's gates apply (processor.gates)
    # What the claim of the occurrence being sent reserved for it on the person's document.
    holds: Holds = NO_HOLDS
    actions: tuple[Action, ...] = ()  # its buttons' catalog (core.actions)
    one_answer: bool = False  # the first answer of anyone wins (else one per person)
    platform: str = SLACK  # TEAMS: `channel` is its `teams_conversation`
    send_at: datetime | None = None  # a one-off's instant (its schedule, in words)

    @property
    def is_recurring(self) -> bool:
        return self.recurrence is not None

    def reanchored(self, after: datetime) -> Message:
        """The message with its series anchored for a search after `after` (see
        Recurrence.reanchored); a one-off as it is."""
        if self.recurrence is None:
            return self
        return replace(self, recurrence=self.recurrence.reanchored(after))

    def to_dm(self, channel: str) -> Message:
        """The message to a person, posting to their DM `channel` (conversations.open's)."""
        return replace(self, channel=channel)

    def expired(self, now: datetime) -> bool:
        return self.recurrence is None and self.expires_at is not None and now > self.expires_at

    @classmethod
    def from_document(cls, doc_id: str, data: dict[str, Any]) -> Message:
        channel, user, platform = recipient(data)
        text = data.get(MessageField.TEXT)
        if not isinstance(text, str) or not text.strip():
            raise DocumentError("empty_text", "text is required and must not be blank")
        if len(text) > MAX_TEXT:
            raise DocumentError("text_too_long", f"text has {len(text)} characters (max 40000)")
        timezone = data.get(MessageField.TIMEZONE) or "UTC"
        if not isinstance(timezone, str):
            raise DocumentError("invalid_timezone", f"timezone {timezone!r} is not a string")
        zone(timezone)
        recurrence = recurrence_from_fields(data)
        expires_at = data.get(MessageField.EXPIRES_AT)
        if expires_at is not None:
            check_instant(expires_at, MessageField.EXPIRES_AT)
        if data.get(MessageField.SEND_AT) is not None:
            check_instant(data[MessageField.SEND_AT], MessageField.SEND_AT)
        grace = data.get(MessageField.MISFIRE_GRACE_SECONDS, DEFAULT_MISFIRE_GRACE)
        if type(grace) is not int or not 0 <= grace <= MAX_MISFIRE_GRACE:
            raise DocumentError(
                "invalid_misfire_grace_seconds",
                f"misfire_grace_seconds must be an int from 0 to {MAX_MISFIRE_GRACE}, "
                f"got {grace!r}",
            )
        allow_broadcast = data.get(MessageField.ALLOW_BROADCAST, False)
        if not isinstance(allow_broadcast, bool):
            raise DocumentError(
                "invalid_allow_broadcast",
                f"allow_broadcast must be a bool, got {allow_broadcast!r}",
            )
        category = data.get(MessageField.CATEGORY)
        if category is not None and not (isinstance(category, str) and CATEGORY_ID.match(category)):
            raise DocumentError("invalid_category", f"category {category!r} is not a category id")
        actions = catalog(data.get(MessageField.ACTIONS))
        one_answer = data.get(MessageField.ONE_ANSWER, False) is True
        return cls(
            doc_id,
            channel,
            text,
            timezone,
            recurrence,
            grace,
            allow_broadcast,
            expires_at,
            user,
            category,
            actions=actions,
            one_answer=one_answer,
            platform=platform,
            send_at=data.get(MessageField.SEND_AT),
        )


def recipient(data: dict[str, Any]) -> tuple[str | None, str | None, str]:
    """A stored message's `channel` or `user` (Slack-shaped), or its `teams_conversation`:
    exactly one, as (channel, user, platform), a Teams conversation in `channel`; else
    DocumentError (`missing_channel`, `channel_and_user`, `invalid_channel`, `invalid_user`,
    `invalid_teams_conversation`)."""
    teams = teams_conversation(data)
    if teams is not None:
        return teams.conversation, teams_person(data), TEAMS
    channel, user = data.get(MessageField.CHANNEL), data.get(MessageField.USER)
    if channel is not None and user is not None:
        raise DocumentError("channel_and_user", "a message names channel or user, not both")
    if user is not None:
        if not isinstance(user, str) or not USER_ID.match(user):
            raise DocumentError("invalid_user", f"user {_shown(user)} is not a Slack user id")
        return None, user, SLACK
    if not isinstance(channel, str) or not channel.strip():
        raise DocumentError("missing_channel", "channel (or user) is required")
    if not CHANNEL_ID.match(channel):
        raise DocumentError("invalid_channel", f"channel {_shown(channel)} is not a Slack id")
    return channel, None, SLACK


def teams_conversation(data: Mapping[str, Any]) -> Destination | None:
    """The stored document's `teams_conversation`, when it names one (then never `channel`
    or `user` too); None when it names none; else DocumentError."""
    conversation = data.get(SubjectField.TEAMS_CONVERSATION)
    if conversation is None:
        return None
    if data.get(SubjectField.CHANNEL) is not None:
        raise DocumentError(
            "teams_and_slack", "a document names teams_conversation or channel, not both"
        )
    if not isinstance(conversation, str) or not TEAMS_CONVERSATION_ID.match(conversation):
        raise DocumentError(
            "invalid_teams_conversation",
            f"teams_conversation {_shown(conversation)} is not a Teams conversation id",
        )
    return Destination(TEAMS, conversation)


def teams_person(data: Mapping[str, Any]) -> str | None:
    """Beside a personal chat's `teams_conversation`, the person it is with (`user`, a Teams
    user id): whose gates a message with a `category` passes (processor.gates). A Slack
    user id there is refused (`teams_and_slack`): it would name someone on the other
    platform."""
    user = data.get(SubjectField.USER)
    if user is None:
        return None
    if isinstance(user, str) and TEAMS_USER_ID.match(user):
        return user
    raise DocumentError(
        "teams_and_slack", f"user {_shown(user)} beside teams_conversation is not a Teams user id"
    )


def _shown(value: object) -> str:
    """A stored value as an error message quotes it: at most 80 characters of it."""
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:80]}... ({len(text)} characters)"
