"""Request bodies of the `api` target, as pydantic models.

They check shape and types only (strict: no "yes" for a bool, no number for an instant);
what depends on other fields, on the stored document or on now (a parsable rrule, a send
time not in the past) is checked in `composer.validation`, so that a create and an edit
merged onto a stored document go through the same rules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

from core.actions import MAX_ACTION_ID, MAX_ACTIONS, MAX_LABEL
from core.http import Instant
from core.models import (
    CHANNEL_PATTERN,
    MAX_MISFIRE_GRACE,
    MAX_SLACK_ID,
    MAX_TEXT,
    TEAMS_USER_ID,
    USER_PATTERN,
)
from core.rotation import MAX_AWAY
from core.rules import MAX_EXDATES

# A category id names a `categories` document (Firestore: at most 1,500 bytes).
MAX_CATEGORY_ID = 128

NonWorkingDayPolicy = Literal["skip", "next_working_day"]
# What reconciliation does when Slack history cannot be read (processor/reconcile.py).
AmbiguityPolicy = Literal["hold", "retry"]
RotationStatus = Literal["active", "paused"]


def _slack_id(pattern: str) -> WithJsonSchema:
    """A Slack id's format in /openapi.json. The check itself is composer.validation's (the
    same core.models regex), so that a 422 names every bad field of a body at once."""
    return WithJsonSchema({"type": "string", "pattern": pattern, "maxLength": MAX_SLACK_ID})


# Slack ids as the API takes them (core.models: format and length).
UserId = Annotated[str, _slack_id(USER_PATTERN)]
ChannelId = Annotated[str, _slack_id(CHANNEL_PATTERN)]

# A `teams_conversations` id (core.models.TEAMS_CONVERSATION_ID); that the bot is installed
# there is checked against the stored document (composer.teams_destination).
MAX_TEAMS_CONVERSATION = 500
TeamsConversationId = Annotated[
    str,
    WithJsonSchema(
        {
            "type": "string",
            "pattern": rf"^[^/\s]{{1,{MAX_TEAMS_CONVERSATION}}}$",
            "maxLength": MAX_TEAMS_CONVERSATION,
        }
    ),
]
# A Teams user (a rotation's member on Teams): core.models.TEAMS_USER_ID, said in JSON Schema.
TEAMS_USER_PATTERN = "^" + TEAMS_USER_ID.pattern.removeprefix(r"\A").removesuffix(r"\Z") + "$"
# A person: a Slack user id, or a Teams one on Teams (a rotation's member; the person of a
# Teams personal chat; whose preferences). The draft's rules say which platform's it must be.
PersonId = Annotated[
    str,
    WithJsonSchema(
        {"type": "string", "anyOf": [{"pattern": USER_PATTERN}, {"pattern": TEAMS_USER_PATTERN}]}
    ),
]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


def _whole(value: object) -> object:
    """JSON Schema's `integer` takes 3.0 as well as 3: so does the API (not 3.5, not "3")."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


Whole = Annotated[int, BeforeValidator(_whole)]
# How late an occurrence of a series may still be sent.
Grace = Annotated[int, Field(ge=0, le=MAX_MISFIRE_GRACE), BeforeValidator(_whole)]


# --- what composer.validation enforces beyond the fields' types, said in JSON Schema --------
# A body's JSON Schema (/openapi.json) carries these, so a client generated from the
# document does not send what the API refuses for its shape alone. What depends on stored
# data or on now (a known category, a send time ahead) stays in docs/api.md.

Schema = dict[str, Any]
_NULL: Schema = {"type": "null"}
_TEXT = {"minLength": 1, "maxLength": MAX_TEXT, "pattern": r"\S"}  # not blank
# A local wall-clock time `YYYY-MM-DDTHH:MM[:SS]` (core.schedule.parse_local).
_LOCAL = (
    r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]"
    r"(:[0-5][0-9])?$"
)
# A `categories` document id (core.store.is_document_id).
_CATEGORY = {
    "minLength": 1,
    "maxLength": MAX_CATEGORY_ID,
    "pattern": r"^(?!\.\.?$)(?!__.*__$)[^/]+$",
}
_MESSAGE_FIELDS: dict[str, Schema] = {
    "category": _CATEGORY,
    "text": _TEXT,
    "dtstart": {"pattern": _LOCAL},
    "exdates": {"items": {"type": "string", "pattern": _LOCAL}},
}


def _given(*names: str) -> Schema:
    """Each of `names` is present and not null."""
    return {"required": list(names), "properties": {n: {"not": _NULL} for n in names}}


def _left_out(*names: str) -> Schema:
    """Each of `names` is absent or null."""
    return {"properties": {n: _NULL for n in names}}


def _exactly_one(*names: str) -> Schema:
    return {"oneOf": [_given(name) for name in names]}


_SERIES_ONLY = ("dtstart", "exdates", "working_days", "on_non_working_day")
# A one-off has `send_at` and no recurring field; a series `rrule` and `dtstart`, no
# `send_at` or `expires_at` (composer.validation.check_message).
_ONE_OFF_OR_SERIES = {
    "oneOf": [
        {"allOf": [_given("send_at"), _left_out("rrule", *_SERIES_ONLY)]},
        {"allOf": [_given("rrule", "dtstart"), _left_out("send_at", "expires_at")]},
    ]
}
# `one_answer: true` is only for a message with buttons.
_ONE_ANSWER_NEEDS_ACTIONS = {
    "if": {"required": ["one_answer"], "properties": {"one_answer": {"const": True}}},
    "then": _given("actions"),
}
# `on_non_working_day` applies to a calendar: `working_days`.
_POLICY_NEEDS_CALENDAR = {"if": _given("on_non_working_day"), "then": _given("working_days")}


_ROTATION_FIELDS: dict[str, Schema] = {
    "name": {"minLength": 1, "maxLength": 200, "pattern": r"\S"},  # rotation_rules.MAX_NAME
    "members": {"minItems": 1, "uniqueItems": True},
    "skips": {"propertyNames": {"pattern": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}},
    "send_time": {"pattern": r"^([01][0-9]|2[0-3]):[0-5][0-9]$"},  # core.rotation.SEND_TIME
    "weekdays": {
        "minItems": 1,
        "uniqueItems": True,
        "items": {"type": "integer", "minimum": 0, "maximum": 6},
    },
    "text": _TEXT,
}


def _rules(
    *rules: Schema,
    fields: dict[str, Schema] | None = None,
    not_null: tuple[str, ...] = (),
    examples: list[Schema] | None = None,
) -> Callable[[Schema], None]:
    """A model's `json_schema_extra`: `rules` all hold, each of `fields` gets its keywords,
    and `not_null` fields may be left out but not be null (an edit cannot remove them)."""

    def extra(schema: Schema) -> None:
        properties = schema["properties"]
        for name in not_null:
            branches = [b for b in properties[name].pop("anyOf") if b != _NULL]
            properties[name].pop("default", None)
            properties[name].update(branches[0])
        for name, keywords in (fields or {}).items():
            properties[name].update(keywords)
        if rules:
            schema["allOf"] = list(rules)
        if examples:
            schema["examples"] = examples

    return extra


class WorkingDays(_Body):
    """Whose public holidays count: an ISO 3166-1 country and, optionally, a subdivision
    (ISO 3166-2 suffix, e.g. `BY` for Bavaria). Whether the place is known is checked
    against the calendar the processor uses (`core.working_days`)."""

    country: str = Field(pattern=r"^[A-Z]{2}$")
    subdivision: str | None = Field(default=None, min_length=1, max_length=64)


class ActionDraft(_Body):
    """One button of a message (`actions`, core.actions): its id comes back with a click,
    its label is what people see."""

    id: str = Field(min_length=1, max_length=MAX_ACTION_ID)
    label: str = Field(min_length=1, max_length=MAX_LABEL, pattern=r"\S")
    style: Literal["primary", "danger"] | None = None


# 1 to 5 buttons; their ids unique (composer.validation).
Actions = Annotated[list[ActionDraft], Field(min_length=1, max_length=MAX_ACTIONS)]


class _MessageSettings(_Body):
    """A message's optional settings, the same in a whole message and in an edit (where
    `null` removes one)."""

    channel: ChannelId | None = None
    user: PersonId | None = None
    teams_conversation: TeamsConversationId | None = None
    send_at: Instant | None = None
    expires_at: Instant | None = None
    rrule: str | None = None
    dtstart: str | None = None
    exdates: list[str] | None = Field(default=None, max_length=MAX_EXDATES)
    misfire_grace_seconds: Grace | None = None
    on_ambiguous: AmbiguityPolicy | None = None
    working_days: WorkingDays | None = None
    on_non_working_day: NonWorkingDayPolicy | None = None
    actions: Actions | None = None


class MessageDraft(_MessageSettings):
    """A whole message: the body of `POST /messages` and `POST /preview`. It names
    `channel`, `user` (a person, sent a direct message) or `teams_conversation` (posted to
    Microsoft Teams), exactly one (composer.validation)."""

    model_config = ConfigDict(
        json_schema_extra=_rules(
            _exactly_one("channel", "user", "teams_conversation"),
            _ONE_OFF_OR_SERIES,
            _ONE_ANSWER_NEEDS_ACTIONS,
            _POLICY_NEEDS_CALENDAR,
            fields=_MESSAGE_FIELDS,
            examples=[
                {
                    "channel": "C0123ABCD",
                    "text": "*Release* at noon",
                    "send_at": "2030-01-07T09:00:00Z",
                },
                {
                    "channel": "C0123ABCD",
                    "text": "Stand-up in 5 minutes",
                    "timezone": "Europe/Berlin",
                    "rrule": "FREQ=WEEKLY;BYDAY=MO,WE;BYHOUR=9;BYMINUTE=55",
                    "dtstart": "2030-01-07T09:55",
                },
            ],
        )
    )

    # A `categories` id: a message to a person then passes their gates (processor.gates).
    category: str | None = Field(default=None, min_length=1, max_length=MAX_CATEGORY_ID)
    text: str
    timezone: str = "UTC"
    allow_broadcast: bool = False
    one_answer: bool = False


class MessageEdit(_MessageSettings):
    """`PUT /messages/{id}`: the fields it names replace the stored ones, `null` removes an
    optional field; fields it does not name keep their stored value."""

    model_config = ConfigDict(
        json_schema_extra=_rules(
            _ONE_ANSWER_NEEDS_ACTIONS,
            fields=_MESSAGE_FIELDS,
            not_null=("text",),  # composer.messages: required, so never removed
        )
    )

    category: str | None = None
    text: str | None = None
    timezone: str | None = None
    allow_broadcast: bool | None = None
    one_answer: bool | None = None


# A rotation's members, and the dates one may list as skipped: far past any team, and small
# enough that a stored rotation stays well inside Firestore's 1 MiB document.
MAX_MEMBERS = 1_000
MAX_SKIP_DATES = 366
Members = Annotated[list[PersonId], Field(max_length=MAX_MEMBERS)]
# A rotation posted to Teams takes Teams user ids as members, one on Slack Slack user ids.
_MEMBERS_OF_ITS_PLATFORM = {
    "if": _given("teams_conversation"),
    "then": {"properties": {"members": {"items": {"pattern": TEAMS_USER_PATTERN}}}},
    "else": {"properties": {"members": {"items": {"pattern": USER_PATTERN}}}},
}
Skips = Annotated[dict[str, Members], Field(max_length=MAX_SKIP_DATES)]
# A local date YYYY-MM-DD (core.rotation.LOCAL_DATE); that it exists is composer.rotation_rules'.
_LOCAL_DATE = {"type": "string", "pattern": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}


class AwayPeriod(_Body):
    """A member out of office from `from` to `to`, inclusive local dates: skipped on each of
    those days exactly as a `skips` entry skips them (core.rotation.Rotation.skipped_on)."""

    model_config = ConfigDict(extra="forbid", strict=True, serialize_by_alias=True)

    member: PersonId
    first: Annotated[str, WithJsonSchema(_LOCAL_DATE)] = Field(alias="from")
    last: Annotated[str, WithJsonSchema(_LOCAL_DATE)] = Field(alias="to")


Away = Annotated[list[AwayPeriod], Field(max_length=MAX_AWAY)]


class RotationDraft(_Body):
    """A whole rotation: the body of `POST /rotations`. It posts to a Slack `channel` or a
    `teams_conversation`, exactly one."""

    model_config = ConfigDict(
        json_schema_extra=_rules(
            _exactly_one("channel", "teams_conversation"),
            _MEMBERS_OF_ITS_PLATFORM,
            fields=_ROTATION_FIELDS,
            examples=[
                {
                    "name": "Stand-up host",
                    "channel": "C0123ABCD",
                    "members": ["U0ALICE00", "U0BOB0000"],
                    "timezone": "Europe/Berlin",
                    "send_time": "09:30",
                    "text": "{member} hosts today's stand-up",
                }
            ],
        )
    )

    name: str
    channel: ChannelId | None = None
    teams_conversation: TeamsConversationId | None = None
    members: Members
    timezone: str
    send_time: str
    weekdays: list[Whole] = Field(default_factory=lambda: [0, 1, 2, 3, 4])
    text: str
    cursor: Whole = 0
    status: RotationStatus = "active"
    # Local date "YYYY-MM-DD" -> the members out that day (checked in composer.rotation_rules).
    skips: Skips | None = None
    away: Away | None = None
    working_days: WorkingDays | None = None
    on_ambiguous: AmbiguityPolicy | None = None
    # Buttons on each day's post, as a message's; the id `skip_today` is "Skip me today".
    actions: Actions | None = None


class RotationEdit(_Body):
    """`PUT /rotations/{id}`: same merge rules as `MessageEdit`."""

    model_config = ConfigDict(
        json_schema_extra=_rules(
            fields=_ROTATION_FIELDS,
            # composer.rotations: required, so never removed
            not_null=("name", "members", "send_time", "text"),
        )
    )

    name: str | None = None
    channel: ChannelId | None = None
    teams_conversation: TeamsConversationId | None = None
    members: Members | None = None
    timezone: str | None = None
    send_time: str | None = None
    weekdays: list[Whole] | None = None
    text: str | None = None
    cursor: Whole | None = None
    status: RotationStatus | None = None
    skips: Skips | None = None
    away: Away | None = None
    working_days: WorkingDays | None = None
    on_ambiguous: AmbiguityPolicy | None = None
    actions: Actions | None = None


class RotationSwap(_Body):
    """`POST /rotations/{id}/swap`: two members who trade places in the order."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"members": ["U0ALICE00", "U0BOB0000"]}]}
    )

    members: Annotated[list[PersonId], Field(min_length=2, max_length=2)]


class RotationPreview(_Body):
    """`POST /rotations/{id}/preview`: previews the stored rotation; the body, when there is
    one, must be an empty object (a field here would preview something that is not sent)."""


# Far more categories than any team defines: a body is bounded before it is looked up.
MAX_OPT_OUTS = 100


class PreferencesEdit(_Body):
    """`PUT /preferences/{user}`: the person's whole list of opted-out category ids."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"opted_out": ["nudges"]}]})

    opted_out: list[str] = Field(max_length=MAX_OPT_OUTS)


# `POST /events`: the caller's own identity for the event (CONTRACT.md).
MAX_EVENT_KEY = 500


class EventBody(_Body):
    """`POST /events`: notify once per event. `key` is the event's identity: the first
    request with it sends, every other is told `duplicate`. It names `channel`, `user` or
    `teams_conversation`, exactly one (composer.events)."""

    model_config = ConfigDict(
        json_schema_extra=_rules(
            _exactly_one("channel", "user", "teams_conversation"),
            fields={"category": _CATEGORY, "text": _TEXT},
            examples=[
                {"key": "stage-717:completed", "channel": "C0123ABCD", "text": "Framing done"}
            ],
        )
    )

    key: str = Field(min_length=1, max_length=MAX_EVENT_KEY)
    channel: ChannelId | None = None
    user: UserId | None = None
    teams_conversation: TeamsConversationId | None = None
    text: str
    category: str | None = Field(default=None, min_length=1, max_length=MAX_CATEGORY_ID)


class SendNowBody(_Body):
    """`POST /messages/{id}/send-now` (optional body): `occurrence_at`, the occurrence the
    caller saw as next; 409 when it is no longer the next one (composer.send_now)."""

    occurrence_at: Instant | None = None


class TestSendBody(_Body):
    """`POST /messages/{id}/test`: the Slack user the test is sent to as a DM
    (composer.test_send)."""

    user: UserId


class OccurrenceEdit(_Body):
    """`POST /messages/{id}/occurrence`: one future occurrence of a series (`occurrence_at`,
    an instant the series yields) made a one-off of its own, with this `text` and `send_at`
    (by default the series' text and the occurrence's instant) (composer.occurrence)."""

    model_config = ConfigDict(json_schema_extra=_rules(fields={"text": _TEXT}))

    occurrence_at: Instant
    text: str | None = None
    send_at: Instant | None = None
