"""Conversations and rosters the Teams stand-in keeps: what a conversation is, whether our bot
is in it, and whether the person in a personal chat blocked it.

Sources (read 2026-12-03):
- Bot Framework activity schema (github.com/microsoft/botframework-sdk, specs/botframework-
  activity/botframework-activity.md, "Conversation account"): `id`, `name`,
  `conversationType`, `tenantId`, `isGroup`.
- learn.microsoft.com/microsoftteams/platform/bots/how-to/conversations/
  conversation-messages, "Status codes from bot conversational APIs": 403
  `BotNotInConversationRoster` (the bot is not part of the conversation roster, e.g. the app
  was uninstalled), 403 `ConversationBlockedByUser` (the user blocked the bot), 404
  `ConversationNotFound`.
- Teams ids: a channel is `19:…@thread.tacv2` (the team's General channel shares the team's
  id), a group chat `19:…@thread.v2`, a personal chat `a:…`; a user is `29:…`, a bot
  `28:{app id}` (learn.microsoft.com/microsoftteams/platform/bots/how-to/
  get-teams-context).
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from emulator.teams_http import ServiceError

ConversationType = Literal["channel", "groupChat", "personal"]
CONVERSATION_TYPES: frozenset[str] = frozenset({"channel", "groupChat", "personal"})
DEFAULT_TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"


@dataclass
class Conversation:
    """A conversation and our bot's place in it. `channel_id` is Graph's `{channel-id}` and
    `aad_group_id` Graph's `{team-id}` (channels only)."""

    id: str
    conversation_type: ConversationType = "channel"
    tenant_id: str = DEFAULT_TENANT
    name: str | None = None
    team_id: str | None = None  # the team's Bot Framework id, channels only
    team_name: str | None = None
    aad_group_id: str | None = None
    user_id: str | None = None  # personal chats: the person (29:…)
    user_aad_id: str | None = None
    installed: bool = True  # our bot is in the roster
    blocked: bool = False  # personal chats: the person blocked our bot
    members: list[str] = field(default_factory=list)

    @property
    def channel_id(self) -> str | None:
        if self.conversation_type != "channel":
            return None
        return self.id.split(";", 1)[0]

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "channel_id": self.channel_id}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Conversation:
        known = {k: v for k, v in data.items() if k != "channel_id"}
        conversation = cls(**known)
        conversation.check()
        return conversation

    def check(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise ValueError("a conversation needs an id")
        if self.conversation_type not in CONVERSATION_TYPES:
            raise ValueError(
                f"conversation_type must be one of {sorted(CONVERSATION_TYPES)},"
                f" got {self.conversation_type!r}"
            )
        if self.conversation_type == "channel" and not (self.team_id and self.aad_group_id):
            raise ValueError("a channel needs its team_id and aad_group_id")
        if self.conversation_type == "personal" and not self.user_id:
            raise ValueError("a personal conversation needs its user_id")

    def account(self) -> dict[str, Any]:
        """The `conversation` object of an activity in this conversation."""
        account: dict[str, Any] = {
            "id": self.id,
            "conversationType": self.conversation_type,
            "tenantId": self.tenant_id,
        }
        if self.conversation_type != "personal":
            account["isGroup"] = True
        if self.name is not None:
            account["name"] = self.name
        return account


def personal_conversation_id(user_id: str, tenant_id: str) -> str:
    """The same `a:…` id for the same person every time, as Teams answers a create."""
    digest = hashlib.sha256(f"{tenant_id}|{user_id}".encode()).hexdigest()[:40]
    return f"a:1{digest}"


class Rosters:
    """Every conversation the stand-in knows, by id."""

    def __init__(self) -> None:
        self._conversations: dict[str, Conversation] = {}

    def add(self, conversation: Conversation) -> Conversation:
        conversation.check()
        self._conversations[conversation.id] = conversation
        return conversation

    def get(self, conversation_id: str) -> Conversation | None:
        return self._conversations.get(conversation_id) or self._conversations.get(
            conversation_id.split(";", 1)[0]
        )

    def all(self) -> list[Conversation]:
        return list(self._conversations.values())

    def clear(self) -> None:
        self._conversations.clear()

    def postable(self, conversation_id: str) -> Conversation:
        """The conversation our bot may post to, or the refusal Teams answers."""
        conversation = self.get(conversation_id)
        if conversation is None:
            raise ServiceError(404, "ConversationNotFound", "Conversation not found.")
        if not conversation.installed:
            raise ServiceError(
                403,
                "BotNotInConversationRoster",
                "The bot is not part of the conversation roster.",
            )
        if conversation.blocked:
            raise ServiceError(
                403, "ConversationBlockedByUser", "User blocked the conversation with the bot."
            )
        return conversation
