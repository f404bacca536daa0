"""Domain types shared by every domain: the stored scheduled message as the processor reads
it, the statuses of messages and ledger entries, and ledger identities."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Any

from core.errors import DocumentError
from core.schedule import Recurrence, recurrence_from_fields, zone

MAX_TEXT = 40_000
CHANNEL_ID = re.compile(r"^[CGD][A-Z0-9]{2,}$")
DEFAULT_MISFIRE_GRACE = 3600


class Status:
    """`scheduled_messages.status` values (the contract's list)."""

    PENDING = "pending"
    RECURRING = "recurring"
    SENDING = "sending"
    SENT = "sent"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    PAUSED = "paused"
    UNCONFIRMED = "unconfirmed"

    WAITING = (PENDING, RECURRING)


class LedgerStatus:
    """`deliveries.status` values. `released` is our addition: the occurrence was not
    delivered (rate limited, or proven undelivered) and may be claimed again."""

    CLAIMED = "claimed"
    SENT = "sent"
    FAILED = "failed"
    SKIPPED = "skipped"
    UNCONFIRMED = "unconfirmed"
    RELEASED = "released"

    RECLAIMABLE = (RELEASED, FAILED)


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


def rotation_delivery_id(rotation_id: str, day: date) -> str:
    """The ledger id of one rotation day: a second claim of that day fails to create it."""
    return f"r:{rotation_id}:{day.isoformat()}"


@dataclass(frozen=True)
class Message:
    """A stored scheduled message, validated for sending."""

    id: str
    channel: str
    text: str
    timezone: str
    recurrence: Recurrence | None
    misfire_grace_seconds: int
    allow_broadcast: bool = False
    # One-offs only: not sent after this instant (the message ends `failed`, code `expired`).
    expires_at: datetime | None = None

    @property
    def is_recurring(self) -> bool:
        return self.recurrence is not None

    def reanchored(self, after: datetime) -> Message:
        """The message with its series anchored for a search after `after` (see
        Recurrence.reanchored); a one-off as it is."""
        if self.recurrence is None:
            return self
        return replace(self, recurrence=self.recurrence.reanchored(after))

    def expired(self, now: datetime) -> bool:
        return self.recurrence is None and self.expires_at is not None and now > self.expires_at

    @classmethod
    def from_document(cls, doc_id: str, data: dict[str, Any]) -> Message:
        channel = data.get("channel")
        if not isinstance(channel, str) or not channel.strip():
            raise DocumentError("missing_channel", "channel is required")
        if not CHANNEL_ID.match(channel):
            raise DocumentError("invalid_channel", f"channel {channel!r} is not a Slack id")
        text = data.get("text")
        if not isinstance(text, str) or not text.strip():
            raise DocumentError("empty_text", "text is required and must not be blank")
        if len(text) > MAX_TEXT:
            raise DocumentError("text_too_long", f"text has {len(text)} characters (max 40000)")
        timezone = data.get("timezone") or "UTC"
        if not isinstance(timezone, str):
            raise DocumentError("invalid_timezone", f"timezone {timezone!r} is not a string")
        zone(timezone)
        recurrence = recurrence_from_fields(data)
        expires_at = data.get("expires_at")
        if expires_at is not None and (
            not isinstance(expires_at, datetime) or expires_at.tzinfo is None
        ):
            raise DocumentError(
                "invalid_expires_at", f"expires_at {expires_at!r} is not a timestamp"
            )
        grace = data.get("misfire_grace_seconds", DEFAULT_MISFIRE_GRACE)
        if not isinstance(grace, int) or isinstance(grace, bool) or grace < 0:
            raise DocumentError(
                "invalid_misfire_grace_seconds",
                f"misfire_grace_seconds must be a non-negative int, got {grace!r}",
            )
        allow_broadcast = data.get("allow_broadcast", False)
        if not isinstance(allow_broadcast, bool):
            raise DocumentError(
                "invalid_allow_broadcast",
                f"allow_broadcast must be a bool, got {allow_broadcast!r}",
            )
        return cls(doc_id, channel, text, timezone, recurrence, grace, allow_broadcast, expires_at)
