"""`events/{sha256 of key}`: one notify-once event (`POST /events`, CONTRACT.md). The
contract's fields (`key`, `delivery_id`, `created_at`, `callers`) and, because the event is
a subject of the pipeline like a message, what its send needs: where it posts, its text, its
status and lease while it is sent, and its retry time when released."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from core.documents.subjects import SubjectField, SubjectWrite
from core.documents.write import UNSET, Add, Delete, Unset


class EventStatus(enum.StrEnum):
    """`events.status`: where the event's one send is."""

    SENDING = "sending"  # claimed: a lease names who sends it
    PENDING = "pending"  # released (rate limited, proven absent): sent again at next_run_at
    SENT = "sent"
    FAILED = "failed"
    UNCONFIRMED = "unconfirmed"  # outcome unverifiable, policy forbids resending
    SKIPPED = "skipped"  # a person's gate held it back (processor.gates): nothing posted


class EventField(enum.StrEnum):
    KEY = "key"
    DELIVERY_ID = "delivery_id"
    CREATED_AT = "created_at"
    CALLERS = "callers"  # how many requests named this key, the first included
    CHANNEL = SubjectField.CHANNEL.value  # where it posts (a person's DM when `user` is set)
    USER = "user"
    TEAMS_CONVERSATION = SubjectField.TEAMS_CONVERSATION.value
    CATEGORY = "category"
    TEXT = "text"
    STATUS = SubjectField.STATUS.value
    NEXT_RUN_AT = SubjectField.NEXT_RUN_AT.value
    ATTEMPTS = "attempts"
    LAST_ERROR = SubjectField.LAST_ERROR.value
    SLACK_TS = "slack_ts"
    SENT_AT = "sent_at"


@dataclass(frozen=True, kw_only=True)
class EventWrite(SubjectWrite):
    """Some of an event's fields (an update, or with the contract's fields its first write)."""

    status: EventStatus | Unset = UNSET
    key: str | Unset = UNSET
    delivery_id: str | Unset = UNSET
    created_at: datetime | Unset = UNSET
    callers: int | Add | Unset = UNSET
    channel: str | Unset = UNSET
    user: str | Unset = UNSET
    category: str | Unset = UNSET
    text: str | Unset = UNSET
    attempts: int | Unset = UNSET
    slack_ts: str | Unset = UNSET
    sent_at: datetime | Unset = UNSET
    next_run_at: datetime | Delete | Unset | None = UNSET  # type: ignore[assignment]
