"""Microsoft Graph's copy of a conversation, as the Teams stand-in answers it: the messages of
a channel or a chat as `chatMessage` resources, newest first, paged.

Sources (read 2026-12-03):
- learn.microsoft.com/graph/api/channel-list-messages: `GET /teams/{team-id}/channels/
  {channel-id}/messages`, application permission `ChannelMessage.Read.Group` (resource-
  specific consent, granted per team); `$top` default 20, at most 50; "other OData query
  parameters are not currently supported". Its order is not documented: newest first here.
- learn.microsoft.com/graph/api/chat-list-messages: `GET /chats/{chat-id}/messages`,
  `ChatMessage.Read.Chat` (RSC, per chat); `$top` at most 50; `$orderby` `lastModifiedDateTime
  desc` (the default) or `createdDateTime desc`, ascending not supported; `$filter` on
  `lastModifiedDateTime` (`gt`, `lt`) or `createdDateTime` (`lt`), applied only when
  `$orderby` names the same property, else ignored.
- learn.microsoft.com/graph/api/resources/chatmessage and chatmessageattachment: `id`,
  `createdDateTime`, `lastModifiedDateTime`, `from.application {id, displayName,
  applicationIdentityType: "bot"}` or `from.user`, `body {contentType, content}` with an
  `<attachment id=…>` per card, `attachments[] {id, contentType, content}`, where an Adaptive
  Card's `content` is the card as a JSON string.
- learn.microsoft.com/graph/paging: `@odata.nextLink` holds the next page's URL; a page may
  hold fewer than `$top` items, even none, while more remain.
- learn.microsoft.com/graph/errors: 401 `InvalidAuthenticationToken`, 403 `Forbidden`
  ("Missing role permissions on the request…"), 404 `NotFound`, 400 `BadRequest`, 429
  `TooManyRequests` with `Retry-After`.
- A bot's personal chat has a Graph id of its own, `19:{user AAD id}_{bot app id}@unq.gbl.
  spaces`: Graph does not take the Bot Framework `a:…` id (`Conversation`'s `graph_chat_id`).
"""

from __future__ import annotations

import base64
import html
import json
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any
from urllib.parse import quote

from emulator.teams_connector import Activities, RecordedActivity
from emulator.teams_conversations import Conversation, Rosters
from emulator.teams_http import ServiceError

CHANNEL_PERMISSION = "ChannelMessage.Read.Group"
CHAT_PERMISSION = "ChatMessage.Read.Chat"
DEFAULT_TOP = 20
MAX_TOP = 50
_FILTERABLE = {"lastModifiedDateTime": {"gt", "lt"}, "createdDateTime": {"lt"}}


def graph_chat_id(conversation: Conversation, app_id: str) -> str | None:
    """The id Graph knows a chat by (None for a channel)."""
    if conversation.conversation_type == "groupChat":
        return conversation.id
    if conversation.conversation_type == "personal":
        return f"19:{conversation.user_aad_id}_{app_id}@unq.gbl.spaces"
    return None


class Graph:
    def __init__(
        self, rosters: Rosters, activities: Activities, app_id: str, base_url: Callable[[], str]
    ) -> None:
        self._rosters = rosters
        self._activities = activities
        self._app_id = app_id
        self._base_url = base_url
        self._grants: set[tuple[str, str]] = set()
        self.short_pages = False

    def clear(self) -> None:
        self._grants.clear()
        self.short_pages = False

    # -- resource-specific consent ---------------------------------------------------------

    def grant(self, conversation: Conversation, permission: str, granted: bool = True) -> None:
        """RSC for the conversation (for a channel: its whole team, as RSC is per team)."""
        wanted = (
            CHANNEL_PERMISSION if conversation.conversation_type == "channel" else (CHAT_PERMISSION)
        )
        if permission != wanted:
            raise ValueError(f"a {conversation.conversation_type} takes {wanted}, not {permission}")
        key = (self._grant_key(conversation), permission)
        if granted:
            self._grants.add(key)
        else:
            self._grants.discard(key)

    def _grant_key(self, conversation: Conversation) -> str:
        if conversation.conversation_type == "channel":
            return conversation.aad_group_id or ""
        return conversation.id

    # -- reads -----------------------------------------------------------------------------

    def resolve(self, path: str) -> Conversation:
        """The conversation a Graph path reads, or 404 NotFound."""
        parts = path.removeprefix("/v1.0/").split("/")
        for conversation in self._rosters.all():
            if (
                len(parts) == 5
                and parts[0] == "teams"
                and parts[2] == "channels"
                and parts[4] == "messages"
                and conversation.conversation_type == "channel"
                and conversation.aad_group_id == parts[1]
                and conversation.channel_id == parts[3]
            ):
                return conversation
            if (
                len(parts) == 3
                and parts[0] == "chats"
                and parts[2] == "messages"
                and graph_chat_id(conversation, self._app_id) == parts[1]
            ):
                return conversation
        raise ServiceError(404, "NotFound", f"Resource not found for the segment '{path}'.")

    def list_messages(
        self, conversation: Conversation, path: str, query: dict[str, str]
    ) -> dict[str, Any]:
        permission = (
            CHANNEL_PERMISSION if conversation.conversation_type == "channel" else CHAT_PERMISSION
        )
        if (self._grant_key(conversation), permission) not in self._grants:
            raise ServiceError(
                403,
                "Forbidden",
                f"Missing role permissions on the request. API requires one of"
                f" '{permission}'. Roles on the request ''.",
            )
        is_chat = conversation.conversation_type != "channel"
        top, order, keep = _page_query(query, is_chat)
        messages = self._activities.in_conversation(conversation.id)
        messages = [m for m in messages if keep(m)]
        messages.sort(key=lambda m: (order(m), int(m.id)), reverse=True)
        cursor = _decode(query.get("$skiptoken"))
        if cursor is not None:
            last = (cursor["k"], int(cursor["i"]))
            messages = [m for m in messages if (order(m), int(m.id)) < last]
        page_number = 0 if cursor is None else int(cursor.get("p", 0)) + 1
        size = _short(top, page_number) if self.short_pages else top
        page, rest = messages[:size], messages[size:]
        body: dict[str, Any] = {
            "@odata.context": f"{self._base_url()}/v1.0/$metadata#Collection(chatMessage)",
            "value": [self._resource(conversation, m) for m in page],
        }
        if rest:
            after = page[-1] if page else None
            token = (
                {"k": order(after), "i": after.id, "p": page_number}
                if after is not None
                else {**(cursor or {"k": "~", "i": str(2**62)}), "p": page_number}
            )
            kept = {k: v for k, v in query.items() if k != "$skiptoken"}
            kept["$skiptoken"] = _encode(token)
            body["@odata.nextLink"] = f"{self._base_url()}{quote(path)}?" + "&".join(
                f"{k}={quote(v)}" for k, v in kept.items()
            )
        return body

    def _resource(self, conversation: Conversation, message: RecordedActivity) -> dict[str, Any]:
        attachments = [
            {
                "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{message.id}/{index}")),
                "contentType": a.get("contentType"),
                "contentUrl": a.get("contentUrl"),
                "content": None if a.get("content") is None else json.dumps(a["content"]),
                "name": a.get("name"),
                "thumbnailUrl": None,
                "teamsAppId": None,
            }
            for index, a in enumerate(message.activity.get("attachments") or [])
        ]
        text = message.activity.get("text")
        content = f"<p>{html.escape(text)}</p>" if text else ""
        content += "".join(f'<attachment id="{a["id"]}"></attachment>' for a in attachments)
        is_channel = conversation.conversation_type == "channel"
        return {
            "id": message.id,
            "replyToId": None,
            "etag": str(int(_instant(message.modified).timestamp() * 1000)),
            "messageType": "message",
            "createdDateTime": message.created,
            "lastModifiedDateTime": message.modified,
            "lastEditedDateTime": None if message.modified == message.created else message.modified,
            "deletedDateTime": None,
            "subject": None,
            "summary": None,
            "chatId": None if is_channel else graph_chat_id(conversation, self._app_id),
            "importance": "normal",
            "locale": "en-us",
            "webUrl": None,
            "channelIdentity": (
                {"teamId": conversation.aad_group_id, "channelId": conversation.channel_id}
                if is_channel
                else None
            ),
            "policyViolation": None,
            "eventDetail": None,
            "from": _sender(message, conversation),
            "body": {"contentType": "html", "content": content},
            "attachments": attachments,
            "mentions": [],
            "reactions": [],
        }


def _sender(message: RecordedActivity, conversation: Conversation) -> dict[str, Any]:
    if message.from_app_id is not None:
        application = {
            "@odata.type": "#microsoft.graph.teamworkApplicationIdentity",
            "id": message.from_app_id,
            "displayName": message.from_name,
            "applicationIdentityType": "bot",
        }
        return {"application": application, "device": None, "user": None}
    user = {
        "@odata.type": "#microsoft.graph.teamworkUserIdentity",
        "id": message.from_user,
        "displayName": message.from_name,
        "userIdentityType": "aadUser",
        "tenantId": conversation.tenant_id,
    }
    return {"application": None, "device": None, "user": user}


def _page_query(
    query: dict[str, str], is_chat: bool
) -> tuple[int, Callable[[RecordedActivity], str], Callable[[RecordedActivity], bool]]:
    """$top, the sort key and the filter, or 400 BadRequest."""
    allowed = {"$top", "$skiptoken"} | ({"$orderby", "$filter"} if is_chat else set())
    for name in query:
        if name not in allowed:
            raise ServiceError(400, "BadRequest", f"Query option '{name}' is not supported.")
    top = DEFAULT_TOP
    if "$top" in query:
        if not query["$top"].isdigit() or int(query["$top"]) < 1:
            raise ServiceError(400, "BadRequest", f"Invalid value '{query['$top']}' for $top.")
        top = int(query["$top"])
        if top > MAX_TOP:
            raise ServiceError(
                400, "BadRequest", f"Limit of '{MAX_TOP}' for Top Query has been exceeded."
            )
    prop = _orderby(query.get("$orderby", "lastModifiedDateTime desc"))
    terms = _filter(query.get("$filter"))
    if any(term[0] != prop for term in terms):
        terms = []  # documented: $filter applies only with $orderby on the same property

    def order(message: RecordedActivity) -> str:
        return message.modified if prop == "lastModifiedDateTime" else message.created

    def keep(message: RecordedActivity) -> bool:
        value = _instant(order(message))
        return all(value > at if op == "gt" else value < at for _, op, at in terms)

    return top, order, keep


def _orderby(value: str) -> str:
    words = value.split()
    if len(words) == 2 and words[0] in _FILTERABLE and words[1].lower() == "desc":
        return words[0]
    raise ServiceError(
        400,
        "BadRequest",
        f"$orderby '{value}' is not supported: lastModifiedDateTime desc or createdDateTime desc.",
    )


def _filter(value: str | None) -> list[tuple[str, str, datetime]]:
    if not value:
        return []
    terms = []
    for clause in value.split(" and "):
        words = clause.split()
        if len(words) != 3 or words[1] not in _FILTERABLE.get(words[0], set()):
            raise ServiceError(400, "BadRequest", f"$filter clause '{clause}' is not supported.")
        try:
            terms.append((words[0], words[1], _instant(words[2])))
        except ValueError:
            raise ServiceError(400, "BadRequest", f"Invalid date '{words[2]}'.") from None
    return terms


def _instant(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _short(top: int, page_number: int) -> int:
    """Short pages: half, empty, full, half, empty, full... of the page size."""
    return (max(1, top // 2), 0, top)[page_number % 3]


def _encode(token: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(token).encode()).decode()


def _decode(token: str | None) -> dict[str, Any] | None:
    if not token:
        return None
    try:
        value = json.loads(base64.urlsafe_b64decode(token.encode()))
    except ValueError:
        raise ServiceError(400, "BadRequest", "Invalid $skiptoken.") from None
    if not isinstance(value, dict) or not {"k", "i"} <= set(value):
        raise ServiceError(400, "BadRequest", "Invalid $skiptoken.")
    return value
