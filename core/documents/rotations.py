"""`rotations/{id}`: its statuses, field names and typed writes. The validated read for
taking turns is core.rotation.Rotation.from_document."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.documents.subjects import SubjectField, SubjectWrite
from core.documents.write import UNSET, Add, Delete, Unset


class RotationStatus(enum.StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"


class RotationField(enum.StrEnum):
    NAME = "name"
    CHANNEL = SubjectField.CHANNEL.value
    TEAMS_CONVERSATION = SubjectField.TEAMS_CONVERSATION.value
    MEMBERS = "members"
    TIMEZONE = "timezone"
    SEND_TIME = "send_time"
    WEEKDAYS = "weekdays"
    WORKING_DAYS = "working_days"
    TEXT = "text"
    CURSOR = "cursor"
    SKIPS = "skips"
    AWAY = "away"  # [{member, from, to}]: a member's days out of office (core.rotation)
    ACTIONS = "actions"  # buttons on each day's post (core.actions); `skip_today` is reserved
    ON_AMBIGUOUS = SubjectField.ON_AMBIGUOUS.value
    LAST_PROCESSED_DATE = "last_processed_date"
    STATUS = SubjectField.STATUS.value
    NEXT_RUN_AT = SubjectField.NEXT_RUN_AT.value
    SHARD = SubjectField.SHARD.value
    LEASE = SubjectField.LEASE.value
    ATTEMPTS = "attempts"  # tries of the claimed day
    ROLLBACK = "rollback"  # while a day is claimed: what giving it back restores
    LAST_ERROR = SubjectField.LAST_ERROR.value
    LAST_MEMBER = "last_member"
    LAST_SENT_AT = "last_sent_at"
    LAST_SLACK_TS = "last_slack_ts"
    SENT_COUNT = "sent_count"
    CREATED_AT = "created_at"
    UPDATED_AT = SubjectField.UPDATED_AT.value
    CREATED_BY = SubjectField.CREATED_BY.value
    UPDATED_BY = SubjectField.UPDATED_BY.value
    VERSION = SubjectField.VERSION.value


# The fields a claim advances and keeps under `rollback`, restored when the day is given back.
RESTORED = (RotationField.LAST_PROCESSED_DATE, RotationField.CURSOR, RotationField.MEMBERS)


@dataclass(frozen=True)
class Rollback:
    """What giving a claimed day back restores, as it was before the claim."""

    last_processed_date: str | None
    cursor: Any
    members: Any

    def to_document(self) -> dict[str, Any]:
        return {
            RotationField.LAST_PROCESSED_DATE.value: self.last_processed_date,
            RotationField.CURSOR.value: self.cursor,
            RotationField.MEMBERS.value: self.members,
        }


@dataclass(frozen=True, kw_only=True)
class RotationWrite(SubjectWrite):
    """Some fields of a stored rotation: its settings (the API stores them as its body,
    composer.models.RotationDraft), and what the processor, the API and the operator write."""

    name: str | Unset = UNSET
    channel: str | Unset = UNSET
    timezone: str | Unset = UNSET
    send_time: str | Unset = UNSET
    weekdays: list[int] | Unset = UNSET
    text: str | Unset = UNSET
    status: RotationStatus | Unset = UNSET
    last_processed_date: str | Unset | None = UNSET
    cursor: Any = UNSET
    members: Any = UNSET
    skips: dict[str, Any] | Unset = UNSET
    actions: list[dict[str, Any]] | Unset = UNSET
    attempts: int | Unset = UNSET
    rollback: Rollback | Delete | Unset = UNSET
    last_member: str | Unset | None = UNSET
    last_sent_at: datetime | Unset = UNSET
    last_slack_ts: str | Unset | None = UNSET
    sent_count: Add | Unset = UNSET
    created_at: datetime | Unset = UNSET
