"""`scheduled_messages/{id}`: its statuses, field names and typed writes. The validated read
for sending is core.models.Message.from_document."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.documents.subjects import SubjectField, SubjectWrite
from core.documents.write import UNSET, Add, Delete, Unset


class Status(enum.StrEnum):
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
    SKIPPED = "skipped"  # a one-off that a person's gate held back


# A message in one of these waits for its `next_run_at`.
WAITING = (Status.PENDING, Status.RECURRING)


class MessageField(enum.StrEnum):
    CHANNEL = SubjectField.CHANNEL.value
    USER = "user"
    TEAMS_CONVERSATION = SubjectField.TEAMS_CONVERSATION.value
    CATEGORY = "category"
    TEXT = "text"
    TIMEZONE = "timezone"
    SEND_AT = "send_at"
    EXPIRES_AT = "expires_at"
    RRULE = "rrule"
    DTSTART = "dtstart"
    EXDATES = "exdates"
    WORKING_DAYS = "working_days"
    ON_NON_WORKING_DAY = "on_non_working_day"
    MISFIRE_GRACE_SECONDS = "misfire_grace_seconds"
    ALLOW_BROADCAST = "allow_broadcast"
    ACTIONS = "actions"  # buttons (core.actions)
    ONE_ANSWER = "one_answer"  # the first answer of anyone wins, not one per person
    ON_AMBIGUOUS = SubjectField.ON_AMBIGUOUS.value
    STATUS = SubjectField.STATUS.value
    NEXT_RUN_AT = SubjectField.NEXT_RUN_AT.value
    SHARD = SubjectField.SHARD.value
    OCCURRENCE_AT = "occurrence_at"  # a released occurrence's identity, kept for its retry
    ANCHOR = "anchor"  # where a series' rule restarts (core.anchor)
    DELETED = "deleted"
    LEASE = SubjectField.LEASE.value
    ATTEMPTS = "attempts"
    LAST_ERROR = SubjectField.LAST_ERROR.value
    SENT_COUNT = "sent_count"
    MISSED_COUNT = "missed_count"
    LAST_SENT_AT = "last_sent_at"
    LAST_SLACK_TS = "last_slack_ts"
    CREATED_AT = "created_at"
    UPDATED_AT = SubjectField.UPDATED_AT.value
    CREATED_BY = SubjectField.CREATED_BY.value
    UPDATED_BY = SubjectField.UPDATED_BY.value
    VERSION = SubjectField.VERSION.value


@dataclass(frozen=True, kw_only=True)
class MessageWrite(SubjectWrite):
    """Some fields of a stored message: the content the API writes, and what the processor,
    the API and the operator write besides."""

    channel: str | Unset = UNSET
    user: str | Unset = UNSET
    teams_conversation: str | Unset = UNSET
    category: str | Unset = UNSET
    text: str | Unset = UNSET
    timezone: str | Unset = UNSET
    allow_broadcast: bool | Unset = UNSET
    actions: list[dict[str, Any]] | Unset = UNSET
    one_answer: bool | Unset = UNSET
    on_ambiguous: str | Unset = UNSET
    misfire_grace_seconds: int | Unset = UNSET
    send_at: datetime | Unset = UNSET
    expires_at: datetime | Unset = UNSET
    rrule: str | Unset = UNSET
    dtstart: str | Unset = UNSET
    exdates: list[str] | Unset = UNSET
    working_days: dict[str, Any] | Unset = UNSET
    on_non_working_day: str | Unset = UNSET
    status: Status | Unset = UNSET
    occurrence_at: datetime | Delete | Unset = UNSET
    anchor: dict[str, Any] | Delete | Unset = UNSET
    deleted: bool | Unset = UNSET
    attempts: int | Unset = UNSET
    sent_count: int | Add | Unset = UNSET
    missed_count: Add | Unset = UNSET
    last_sent_at: datetime | Unset = UNSET
    last_slack_ts: str | Unset | None = UNSET
    created_at: datetime | Unset = UNSET
