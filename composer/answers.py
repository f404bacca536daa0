"""Answers of the `api` target, as pydantic models: the serializers (`composer.serialize`)
build every answer through these, and `/openapi.json` describes each with the same model's
serialization schema, so an answer and its documented shape are one thing.

A stored record's answer is the document's fields plus its `id`; other services may write
documents directly, so fields beyond the ones named here pass through (`extra="allow"`) and
every named field is optional: an answer carries exactly the fields the document has. Text,
numbers and flags are strict: a `version` stored as text is not answered as a number.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
)

from composer.models import AmbiguityPolicy, NonWorkingDayPolicy, RotationStatus
from core.documents.deliveries import LedgerStatus
from core.documents.messages import Status

# `names` (composer.names): the display name of each id the record shows, when known.
Names = Annotated[
    dict[StrictStr, StrictStr] | None,
    Field(
        description="'#name' of each Slack channel, '@Real Name' of each person and the name"
        " of each Teams conversation this shows (destination, members, mentions in the"
        " text), from the directory cache; ids it does not know are left out"
    ),
]

# An instant as ISO-8601 with its offset, exactly as `datetime.isoformat` writes it
# (`+00:00` for UTC, the zone's own offset for a local time).
Timestamp = Annotated[AwareDatetime, PlainSerializer(datetime.isoformat, return_type=str)]


class _Stored(BaseModel):
    model_config = ConfigDict(extra="allow")


class ErrorHelp(BaseModel):
    """The error catalog's words for a code (core.error_help)."""

    title: StrictStr = Field(description="what went wrong, in words")
    action: StrictStr = Field(description="what to do; the destination by its name, else its id")


class StoredError(_Stored):
    """`last_error` of a record, `error` of a delivery: why a send or a document failed."""

    code: StrictStr | None = None
    message: StrictStr | None = None
    at: Timestamp | None = None
    help: ErrorHelp | None = None


class Lease(_Stored):
    """While an occurrence is claimed: who holds its send, until when, and which it is."""

    owner: StrictStr | None = None
    expires_at: Timestamp | None = None
    occurrence_at: Timestamp | None = None
    occurrence_date: StrictStr | None = None
    member: StrictStr | None = None
    held_since: Timestamp | None = None
    held_code: StrictStr | None = None


class StoredWorkingDays(_Stored):
    country: StrictStr | None = None
    subdivision: StrictStr | None = None


class StoredAction(_Stored):
    """One button of a message or a rotation (core.actions)."""

    id: StrictStr | None = None
    label: StrictStr | None = None
    style: StrictStr | None = None


_SCHEDULE_TEXT = Field(
    default=None,
    description="the schedule in plain words, in its timezone (core.schedule_words); null"
    " when the fields make no schedule",
)


class StoredAway(_Stored):
    """One of a rotation's `away` periods: a member out from `from` to `to` (local dates)."""

    model_config = ConfigDict(extra="allow", serialize_by_alias=True)

    member: StrictStr | None = None
    first: StrictStr | None = Field(default=None, alias="from")
    last: StrictStr | None = Field(default=None, alias="to")


_CREATED_BY = Field(
    default=None,
    description="who made it: a Slack user id, the page's sign-in email, `admin` (the admin "
    "token) or the service account's email (OIDC); absent when written straight to Firestore",
)
_UPDATED_BY = Field(default=None, description="who last changed it, in the same terms")


class Message(_Stored):
    """A stored message (`scheduled_messages/{id}`) and its `id`."""

    id: StrictStr
    schedule_text: StrictStr | None = _SCHEDULE_TEXT
    channel: StrictStr | None = None
    user: StrictStr | None = None
    teams_conversation: StrictStr | None = None
    category: StrictStr | None = None
    text: StrictStr | None = None
    timezone: StrictStr | None = None
    send_at: Timestamp | None = None
    expires_at: Timestamp | None = None
    rrule: StrictStr | None = None
    dtstart: StrictStr | None = None
    exdates: list[StrictStr] | None = None
    working_days: StoredWorkingDays | None = None
    on_non_working_day: NonWorkingDayPolicy | None = None
    misfire_grace_seconds: StrictInt | None = None
    allow_broadcast: StrictBool | None = None
    actions: list[StoredAction] | None = None
    one_answer: StrictBool | None = None
    on_ambiguous: AmbiguityPolicy | None = None
    status: Status | None = None
    next_run_at: Timestamp | None = None
    shard: StrictInt | None = None
    occurrence_at: Timestamp | None = None
    anchor: dict[str, Any] | None = None
    deleted: StrictBool | None = None
    lease: Lease | None = None
    attempts: StrictInt | None = None
    last_error: StoredError | None = None
    sent_count: StrictInt | None = None
    missed_count: StrictInt | None = None
    last_sent_at: Timestamp | None = None
    last_slack_ts: StrictStr | None = None
    created_at: Timestamp | None = None
    updated_at: Timestamp | None = None
    created_by: StrictStr | None = _CREATED_BY
    updated_by: StrictStr | None = _UPDATED_BY
    version: StrictInt | None = None
    names: Names = None
    series_id: StrictStr | None = Field(
        default=None, description="a one-off made from one occurrence of this series"
    )


class UpToday(BaseModel):
    date: date
    member: StrictStr | None = Field(description="null when every member is out today")


class UpNext(UpToday):
    at: Timestamp = Field(description="when the turn is due (UTC)")


class RotationUp(BaseModel):
    """Who is up: today's turn (null when today is not a turn day) and the next one after
    it (null while paused), as the send would take them from the stored order."""

    today: UpToday | None
    next: UpNext | None


class Rotation(_Stored):
    """A stored rotation (`rotations/{id}`) and its `id`."""

    id: StrictStr
    schedule_text: StrictStr | None = _SCHEDULE_TEXT
    name: StrictStr | None = None
    channel: StrictStr | None = None
    teams_conversation: StrictStr | None = None
    members: list[StrictStr] | None = None
    timezone: StrictStr | None = None
    send_time: StrictStr | None = None
    weekdays: list[StrictInt] | None = None
    text: StrictStr | None = None
    cursor: StrictInt | None = None
    status: RotationStatus | None = None
    skips: dict[str, list[StrictStr]] | None = None
    away: list[StoredAway] | None = None
    working_days: StoredWorkingDays | None = None
    on_ambiguous: AmbiguityPolicy | None = None
    actions: list[StoredAction] | None = None
    next_run_at: Timestamp | None = None
    shard: StrictInt | None = None
    last_processed_date: StrictStr | None = None
    lease: Lease | None = None
    rollback: dict[str, Any] | None = None
    attempts: StrictInt | None = None
    last_error: StoredError | None = None
    last_member: StrictStr | None = None
    last_sent_at: Timestamp | None = None
    last_slack_ts: StrictStr | None = None
    sent_count: StrictInt | None = None
    created_at: Timestamp | None = None
    updated_at: Timestamp | None = None
    created_by: StrictStr | None = _CREATED_BY
    updated_by: StrictStr | None = _UPDATED_BY
    version: StrictInt | None = None
    names: Names = None
    up: RotationUp | None = Field(
        default=None, description="worked out at read time; absent if the rotation is invalid"
    )


class MessagePage(BaseModel):
    """`GET /messages`: one page, and the cursor of the next (null on the last page)."""

    messages: list[Message]
    next_cursor: StrictStr | None


class Delivery(BaseModel):
    """One ledger entry of a message: an occurrence that was claimed, and what became of it
    (`reason`: the entry's own, else its error's code). Every field is listed, null when
    the entry has none."""

    id: StrictStr
    occurrence_at: Timestamp | None = None
    status: LedgerStatus | None = None
    reason: StrictStr | None = None
    slack_ts: StrictStr | None = None
    attempts: StrictInt | None = None
    claimed_at: Timestamp | None = None
    sent_at: Timestamp | None = None
    channel: StrictStr | None = Field(default=None, description="a person's DM when `user` is set")
    user: StrictStr | None = None
    error: StoredError | None = None
    names: Names = None


class DeliveryPage(BaseModel):
    """`GET /messages/{id}/deliveries`: newest occurrence first."""

    deliveries: list[Delivery]
    next_cursor: StrictStr | None


class ButtonResponse(BaseModel):
    """One answer to the buttons of a message or a rotation (`responses/{id}`): who clicked
    which action of which delivery (a rotation's: its day, `r:<rotation>:<date>`), the
    action's label from the catalog that delivery was sent with (else the subject's current
    one; null if not in it), and whether the Slack message shows it yet."""

    id: StrictStr
    delivery_id: StrictStr | None = None
    user: StrictStr | None = None
    action_id: StrictStr | None = None
    label: StrictStr | None = None
    answered_at: Timestamp | None = None
    shown: StrictBool = Field(description="false until the Slack message shows this answer")
    not_shown: StrictStr | None = Field(
        default=None,
        description="Slack's code when the message can never show this answer (e.g."
        " message_not_found: the post was deleted); the answer still counts",
    )


class ButtonResponsePage(BaseModel):
    """`GET /messages/{id}/responses`, `GET /rotations/{id}/responses`: newest answer first."""

    responses: list[ButtonResponse]
    next_cursor: StrictStr | None


class RotationPage(BaseModel):
    """`GET /rotations`: a page of rotations by next run."""

    rotations: list[Rotation]
    next_cursor: StrictStr | None


class RotationDay(Delivery):
    """One day of a rotation's ledger: the local date and the member it named."""

    occurrence_date: StrictStr | None = None
    member: StrictStr | None = None


class RotationDayPage(BaseModel):
    """`GET /rotations/{id}/deliveries`: a page of the rotation's days, newest first."""

    deliveries: list[RotationDay]
    next_cursor: StrictStr | None


class Occurrence(BaseModel):
    utc: Timestamp
    local: Timestamp = Field(description="the same instant in the draft's timezone")
    held_back: StrictStr | None = Field(
        default=None,
        description="a message to a person with a category: the gate that would hold this"
        " occurrence back (opted_out, quiet_window, daily_cap), as the send's claim decides"
        " on today's documents; null: it would be sent",
    )


_CARD = Field(
    default=None,
    description="on Microsoft Teams: the Adaptive Card posted (`blocks` is then empty);"
    " absent for Slack",
)


class MessagePreview(BaseModel):
    """`POST /preview`: what the draft would post (Slack's text and blocks, or Teams' text
    and card), and when."""

    text: StrictStr
    blocks: list[dict[str, Any]]
    card: dict[str, Any] | None = _CARD
    occurrences: list[Occurrence]
    names: Names = None
    schedule_text: StrictStr | None = _SCHEDULE_TEXT


class Turn(BaseModel):
    date: date
    utc: Timestamp
    local: Timestamp
    member: StrictStr | None = Field(description="null on a day when every member is out")


class RotationTurns(BaseModel):
    """`POST /rotations/{id}/preview`: the next turns, and the post of the first one somebody
    takes (`text` null and `blocks` empty when nobody does)."""

    text: StrictStr | None
    blocks: list[dict[str, Any]]
    card: dict[str, Any] | None = _CARD
    turns: list[Turn]
    names: Names = None
    schedule_text: StrictStr | None = _SCHEDULE_TEXT


class AgendaItem(BaseModel):
    """One occurrence due in the agenda's range: a message's or a rotation's turn."""

    kind: Literal["message", "rotation"]
    id: StrictStr
    at: Timestamp = Field(description="when it is due (UTC)")
    local: Timestamp = Field(description="the same instant on the schedule's wall clock")
    timezone: StrictStr
    channel: StrictStr | None = None
    user: StrictStr | None = None
    teams_conversation: StrictStr | None = None
    text: StrictStr = Field(description="a rotation's: its text naming the member")
    schedule_text: StrictStr = Field(description="the schedule in words")
    member: StrictStr | None = Field(default=None, description="a rotation turn's member")
    names: dict[str, StrictStr] = Field(
        description="#name or @Name of each id the item shows, where known"
    )


class AgendaPage(BaseModel):
    """`GET /agenda`: the items due in the range, by `at`."""

    items: list[AgendaItem]
    note: StrictStr | None = Field(
        description="why the list is incomplete, when a bound was hit; null when it is not"
    )


class OpenApiDocument(BaseModel):
    """`GET /openapi.json`: this API's OpenAPI 3.1 description."""

    model_config = ConfigDict(extra="allow")

    openapi: StrictStr
    info: dict[str, Any]
    paths: dict[str, Any]
    components: dict[str, Any]


class Category(BaseModel):
    """One category a message may have (`categories/{id}`), with the contract's defaults for
    what its document leaves out; `quiet_window_hours` and `daily_cap` are null when the
    document's value is malformed (or, for the cap, absent)."""

    id: StrictStr
    label: StrictStr
    opt_out_allowed: StrictBool = Field(description="false for a must-read category")
    quiet_window_hours: StrictInt | StrictFloat | None = None
    daily_cap: StrictInt | None = None


class CategoryList(BaseModel):
    """`GET /categories`: every category, in id order."""

    categories: list[Category]


class InstalledConversation(BaseModel):
    """A Microsoft Teams conversation the bot is installed in (`teams_conversations/{id}`):
    its id is what a message's `teams_conversation` names."""

    id: StrictStr
    name: StrictStr
    conversation_type: Literal["channel", "groupChat", "personal"]
    tenant_id: StrictStr
    installed_at: Timestamp | None = None


class TeamsConversationList(BaseModel):
    """`GET /teams/conversations`: the installed conversations, by name (at most 1,000)."""

    conversations: list[InstalledConversation]


class Preferences(BaseModel):
    """`GET`/`PUT /preferences/{user}`: what the person opted out of, and every category
    they could choose from."""

    user: StrictStr
    opted_out: list[StrictStr]
    categories: list[Category]


class EventReceipt(BaseModel):
    """`POST /events`: the event's one delivery and where its send is. 201 for the first
    caller with the key (`duplicate: false`, `status`: what its send did), 200 for every
    later or concurrent one (`duplicate: true`, the send's current status; nothing sent)."""

    delivery_id: StrictStr = Field(description="`e:<sha256 of key>`, the ledger entry")
    duplicate: StrictBool
    status: Literal["sending", "sent", "failed", "skipped", "unconfirmed"]


class DirectoryChannel(BaseModel):
    """A channel the pickers offer: a Slack channel (`is_member`: the bot is in it), or an
    installed Microsoft Teams conversation (`platform` teams, always `is_member`)."""

    id: StrictStr
    name: StrictStr = Field(description="without the '#'")
    is_private: StrictBool
    is_member: StrictBool
    platform: Literal["slack", "teams"]


class ChannelList(BaseModel):
    """`GET /directory/channels`: Slack's channels by name, then Teams' conversations."""

    channels: list[DirectoryChannel]
    next_cursor: StrictStr | None


class DirectoryUser(BaseModel):
    """A person the pickers offer: their Slack id, handle and real name ("" if none)."""

    id: StrictStr
    name: StrictStr
    real_name: StrictStr


class UserList(BaseModel):
    """`GET /directory/users`: people by real name."""

    users: list[DirectoryUser]
    next_cursor: StrictStr | None


class SlackPerson(DirectoryUser):
    """The signed-in person's Slack account."""


class Me(BaseModel):
    """`GET /me`: the signed-in person's email and Slack account (null when Slack knows no
    one with that email); both null for the admin token."""

    email: StrictStr | None
    slack_user: SlackPerson | None


class SendNowReceipt(BaseModel):
    """`POST /messages/{id}/send-now`: the message after the send, the occurrence's ledger
    entry, and how its send ended (`sending`: a worker holds it, or it will be retried; its
    deliveries show how it ends)."""

    message: Message
    delivery_id: StrictStr = Field(description="`m:<id>:<occurrence>`, the ledger entry")
    status: Literal["sending", "sent", "failed", "skipped"]


class TestSent(BaseModel):
    """`POST /messages/{id}/test`: where the test went (the person's DM) and its Slack `ts`."""

    channel: StrictStr
    ts: StrictStr | None = None


class OccurrenceSplit(BaseModel):
    """`POST /messages/{id}/occurrence`: the series without the occurrence (an exdate more),
    and the one-off that took its place (`series_id` names the series)."""

    series: Message
    message: Message
