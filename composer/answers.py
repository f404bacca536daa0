"""Answers of the `api` target, as pydantic models: the serializers (`composer.serialize`)
build every answer through these, and `/openapi.json` describes each with the same model's
serialization schema, so an answer and its documented shape are one thing.

A stored record's answer is the document's fields plus its `id`; other services may write
documents directly, so fields beyond the ones named here pass through (`extra="allow"`) and
every named field is optional: an answer carries exactly the fields the document has.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, PlainSerializer

from composer.models import AmbiguityPolicy, NonWorkingDayPolicy, RotationStatus

# An instant as ISO-8601 with its offset, exactly as `datetime.isoformat` writes it
# (`+00:00` for UTC, the zone's own offset for a local time).
Timestamp = Annotated[AwareDatetime, PlainSerializer(datetime.isoformat, return_type=str)]

MessageStatus = Literal[
    "pending",
    "recurring",
    "sending",
    "sent",
    "completed",
    "failed",
    "cancelled",
    "paused",
    "unconfirmed",
    "skipped",
]
LedgerStatus = Literal["claimed", "sent", "failed", "skipped", "unconfirmed", "released"]


class _Stored(BaseModel):
    model_config = ConfigDict(extra="allow")


class StoredError(_Stored):
    """`last_error` of a record, `error` of a delivery: why a send or a document failed."""

    code: str | None = None
    message: str | None = None
    at: Timestamp | None = None


class Lease(_Stored):
    """While an occurrence is claimed: who holds its send, until when, and which it is."""

    owner: str | None = None
    expires_at: Timestamp | None = None
    occurrence_at: Timestamp | None = None
    occurrence_date: str | None = None
    member: str | None = None
    held_since: Timestamp | None = None
    held_code: str | None = None


class StoredWorkingDays(_Stored):
    country: str | None = None
    subdivision: str | None = None


class Message(_Stored):
    """A stored message (`scheduled_messages/{id}`) and its `id`."""

    id: str
    channel: str | None = None
    user: str | None = None
    category: str | None = None
    text: str | None = None
    timezone: str | None = None
    send_at: Timestamp | None = None
    expires_at: Timestamp | None = None
    rrule: str | None = None
    dtstart: str | None = None
    exdates: list[str] | None = None
    working_days: StoredWorkingDays | None = None
    on_non_working_day: NonWorkingDayPolicy | None = None
    misfire_grace_seconds: int | None = None
    allow_broadcast: bool | None = None
    on_ambiguous: AmbiguityPolicy | None = None
    status: MessageStatus | None = None
    next_run_at: Timestamp | None = None
    shard: int | None = None
    occurrence_at: Timestamp | None = None
    anchor: dict[str, Any] | None = None
    deleted: bool | None = None
    lease: Lease | None = None
    attempts: int | None = None
    last_error: StoredError | None = None
    sent_count: int | None = None
    missed_count: int | None = None
    last_sent_at: Timestamp | None = None
    last_slack_ts: str | None = None
    created_at: Timestamp | None = None
    updated_at: Timestamp | None = None
    version: int | None = None


class Rotation(_Stored):
    """A stored rotation (`rotations/{id}`) and its `id`."""

    id: str
    name: str | None = None
    channel: str | None = None
    members: list[str] | None = None
    timezone: str | None = None
    send_time: str | None = None
    weekdays: list[int] | None = None
    text: str | None = None
    cursor: int | None = None
    status: RotationStatus | None = None
    skips: dict[str, list[str]] | None = None
    working_days: StoredWorkingDays | None = None
    on_ambiguous: AmbiguityPolicy | None = None
    next_run_at: Timestamp | None = None
    shard: int | None = None
    last_processed_date: str | None = None
    lease: Lease | None = None
    rollback: dict[str, Any] | None = None
    attempts: int | None = None
    last_error: StoredError | None = None
    last_member: str | None = None
    last_sent_at: Timestamp | None = None
    last_slack_ts: str | None = None
    sent_count: int | None = None
    created_at: Timestamp | None = None
    updated_at: Timestamp | None = None
    version: int | None = None


class MessagePage(BaseModel):
    """`GET /messages`: one page, and the cursor of the next (null on the last page)."""

    messages: list[Message]
    next_cursor: str | None


class Delivery(BaseModel):
    """One ledger entry of a message: an occurrence that was claimed, and what became of it
    (`reason`: the entry's own, else its error's code). Every field is listed, null when
    the entry has none."""

    id: str
    occurrence_at: Timestamp | None = None
    status: LedgerStatus | None = None
    reason: str | None = None
    slack_ts: str | None = None
    attempts: int | None = None
    claimed_at: Timestamp | None = None
    sent_at: Timestamp | None = None
    channel: str | None = None
    error: StoredError | None = None


class DeliveryPage(BaseModel):
    """`GET /messages/{id}/deliveries`: newest occurrence first."""

    deliveries: list[Delivery]
    next_cursor: str | None


class Occurrence(BaseModel):
    utc: Timestamp
    local: Timestamp = Field(description="the same instant in the draft's timezone")


class MessagePreview(BaseModel):
    """`POST /preview`: the Slack text and blocks the draft would post, and when."""

    text: str
    blocks: list[dict[str, Any]]
    occurrences: list[Occurrence]


class Turn(BaseModel):
    date: date
    utc: Timestamp
    local: Timestamp
    member: str | None = Field(description="null on a day when every member is out")


class RotationTurns(BaseModel):
    """`POST /rotations/{id}/preview`: the next turns, and the post of the first one somebody
    takes (`text` null and `blocks` empty when nobody does)."""

    text: str | None
    blocks: list[dict[str, Any]]
    turns: list[Turn]


class OpenApiDocument(BaseModel):
    """`GET /openapi.json`: this API's OpenAPI 3.1 description."""

    model_config = ConfigDict(extra="allow")

    openapi: str
    info: dict[str, Any]
    paths: dict[str, Any]
    components: dict[str, Any]
