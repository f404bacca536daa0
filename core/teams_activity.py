"""Inbound Bot Framework activities, as far as we read them: every activity's `type` and
`serviceUrl`, and what an install or a removal of our bot says about its conversation.

Teams tells a bot it was added to a conversation by an `installationUpdate` (`action` `add`,
or `add-upgrade` when an upgrade re-adds it) and by a `conversationUpdate` whose
`membersAdded` holds the bot (the activity's `recipient`); removed, by `remove` /
`remove-upgrade` or `membersRemoved` (Bot Framework activity schema; botbuilder's
ActivityHandler dispatches the same way). A malformed body is a `BadRequest` naming the
field, as the activity spells it (`conversation.conversationType`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StrictStr, ValidationError

from core.documents.teams_conversations import ConversationType, Place
from core.errors import BadRequest
from core.store import is_document_id

INSTALLATION_UPDATE = "installationUpdate"
CONVERSATION_UPDATE = "conversationUpdate"
INVOKE = "invoke"
_ADDED = frozenset({"add", "add-upgrade"})
_REMOVED = frozenset({"remove", "remove-upgrade"})
# Teams' General channel has no name of its own in channelData.
GENERAL_CHANNEL = "General"
# The longest body we parse: Teams' activities are a few kilobytes.
MAX_BODY_BYTES = 256 * 1024

Text = StrictStr


class _Part(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=False)


class _Account(_Part):
    id: Text = Field(min_length=1)
    name: Text | None = None
    aad_object_id: Text | None = Field(default=None, alias="aadObjectId")


class _Conversation(_Part):
    id: Text = Field(min_length=1)
    conversation_type: ConversationType = Field(alias="conversationType")
    tenant_id: Text | None = Field(default=None, alias="tenantId")
    name: Text | None = None


class _Team(_Part):
    id: Text = Field(min_length=1)
    name: Text | None = None
    aad_group_id: Text | None = Field(default=None, alias="aadGroupId")


class _Tenant(_Part):
    id: Text = Field(min_length=1)


class _ChannelData(_Part):
    team: _Team | None = None
    channel: _Account | None = None
    tenant: _Tenant | None = None


class _Membership(_Part):
    """The fields an install or a removal must have."""

    service_url: Text = Field(alias="serviceUrl", min_length=1)
    conversation: _Conversation
    recipient: _Account
    from_: _Account | None = Field(default=None, alias="from")
    channel_data: _ChannelData | None = Field(default=None, alias="channelData")
    timestamp: AwareDatetime | None = None


class _Envelope(_Part):
    """What every activity must have: its type, and where it came from (the token's
    `serviceurl` claim is checked against `serviceUrl`)."""

    type: Text = Field(min_length=1)
    service_url: Text = Field(alias="serviceUrl", min_length=1)


@dataclass(frozen=True)
class Activity:
    type: str
    service_url: str
    body: dict[str, Any]


@dataclass(frozen=True)
class Membership:
    """Our bot added to (`added`) or removed from a conversation."""

    conversation_id: str
    added: bool
    place: Place
    at: datetime | None  # the activity's `timestamp`


def load(raw: bytes) -> dict[str, Any] | None:
    """The body as a JSON object, or None when it is not one. Read before the token is
    checked only for the `serviceUrl` it names: nothing else is looked at until then."""
    if len(raw) > MAX_BODY_BYTES:
        return None
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def claimed_service_url(body: dict[str, Any] | None) -> str | None:
    """The `serviceUrl` the body names, when it names one."""
    value = None if body is None else body.get("serviceUrl")
    return value if isinstance(value, str) and value else None


def activity(raw: bytes, body: dict[str, Any] | None) -> Activity:
    """The activity `raw` holds (`body`: `load(raw)`); `BadRequest` naming what is wrong."""
    if body is None:
        if len(raw) > MAX_BODY_BYTES:
            raise BadRequest(f"the body is larger than {MAX_BODY_BYTES} bytes")
        raise BadRequest("the body must be a JSON object (a Bot Framework activity)")
    envelope = _validated(_Envelope, body)
    return Activity(type=envelope.type, service_url=envelope.service_url, body=body)


def membership(received: Activity) -> Membership | None:
    """What an install or a removal of our bot says; None for any other activity."""
    added = _added(received)
    if added is None:
        return None
    parsed = _validated(_Membership, received.body)
    conversation_id = parsed.conversation.id.split(";", 1)[0]
    if not is_document_id(conversation_id):
        raise _field("conversation.id", "is not a conversation id")
    return Membership(
        conversation_id=conversation_id,
        added=added,
        place=_place(parsed, conversation_id),
        at=parsed.timestamp,
    )


def _added(received: Activity) -> bool | None:
    """True: an install of our bot; False: a removal; None: neither."""
    body = received.body
    if received.type == INSTALLATION_UPDATE:
        action = body.get("action")
        if action in _ADDED:
            return True
        if action in _REMOVED:
            return False
        return None
    if received.type != CONVERSATION_UPDATE:
        return None
    recipient = body.get("recipient")
    bot = recipient.get("id") if isinstance(recipient, dict) else None
    if not isinstance(bot, str) or not bot:
        raise _field("recipient.id", "is required (the bot's id)")
    if _names(body, "membersAdded", bot):
        return True
    if _names(body, "membersRemoved", bot):
        return False
    return None


def _names(body: dict[str, Any], field: str, bot: str) -> bool:
    members = body.get(field)
    if members is None:
        return False
    if not isinstance(members, list):
        raise _field(field, "must be a list of accounts")
    return any(isinstance(m, dict) and m.get("id") == bot for m in members)


def _place(parsed: _Membership, conversation_id: str) -> Place:
    conversation, data = parsed.conversation, parsed.channel_data or _ChannelData()
    tenant = conversation.tenant_id or (data.tenant.id if data.tenant else None)
    if not tenant:
        raise _field("conversation.tenantId", "is required (or channelData.tenant.id)")
    kind = conversation.conversation_type
    if kind is ConversationType.GROUP_CHAT:
        name = conversation.name or f"Group chat ({conversation_id})"
        return Place(parsed.service_url, tenant, kind, name)
    if kind is ConversationType.PERSONAL:
        if parsed.from_ is None:
            raise _field("from", "is required in a personal conversation (the person)")
        person = parsed.from_
        name = person.name or f"Personal chat ({person.id})"
        return Place(
            parsed.service_url,
            tenant,
            kind,
            name,
            user_id=person.id,
            user_aad_id=person.aad_object_id,
        )
    if data.team is None:
        raise _field("channelData.team", "is required for a channel conversation")
    channel = data.channel.name if data.channel is not None else None
    name = " / ".join(part for part in (data.team.name, channel or GENERAL_CHANNEL) if part)
    return Place(
        parsed.service_url,
        tenant,
        kind,
        name,
        team_id=data.team.id,
        aad_group_id=data.team.aad_group_id,
        channel_id=conversation_id,
    )


def _validated(model: type[_Part], body: dict[str, Any]) -> Any:
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        details = [
            {"field": ".".join(str(p) for p in err["loc"]) or "body", "message": err["msg"]}
            for err in exc.errors()
        ]
        fields = ", ".join(d["field"] for d in details)
        raise BadRequest(f"invalid activity fields: {fields}", details) from None


def _field(name: str, message: str) -> BadRequest:
    return BadRequest(f"invalid activity field: {name}", [{"field": name, "message": message}])
