"""What Teams sends a bot, built as Teams builds it: install and remove, and a click on an
Adaptive Card's `Action.Execute` (an `adaptiveCard/action` invoke).

Sources (read 2026-12-03):
- Bot Framework activity schema (github.com/microsoft/botframework-sdk, specs/
  botframework-activity/botframework-activity.md): `type`, `id`, `timestamp`, `serviceUrl`,
  `channelId`, `from`, `recipient`, `conversation`, `replyToId`, `value`, `name`, `action`,
  `membersAdded`, `membersRemoved`, `channelData`.
- learn.microsoft.com/microsoftteams/platform/bots/how-to/conversations/subscribe-to-
  conversation-events: `installationUpdate` with `action` `add` / `remove` in every scope;
  `conversationUpdate` with `membersAdded` / `membersRemoved` holding the bot (`28:{app
  id}`), and for a team `channelData.eventType` `teamMemberAdded` / `teamMemberRemoved`,
  `channelData.team` `{id, name, aadGroupId}`, `channelData.channel`, `channelData.tenant`.
- learn.microsoft.com/microsoftteams/platform/task-modules-and-cards/cards/universal-actions-
  for-adaptive-cards/work-with-universal-actions-for-adaptive-cards: the invoke is
  `{"type": "invoke", "name": "adaptiveCard/action", "value": {"action": {"type":
  "Action.Execute", "verb", "data"}, "trigger": "manual"}}`, with `replyToId` the card's
  activity; in a channel its `conversation.id` is the thread's,
  `19:…@thread.tacv2;messageid={root activity id}`.
"""

from __future__ import annotations

import itertools
from datetime import datetime
from typing import Any

from emulator.teams_connector import iso_millis
from emulator.teams_conversations import Conversation

INSTALLER = "29:1installer"
_ids = itertools.count(1)


class Inbound:
    """Builds inbound activities for one bot at one service URL."""

    def __init__(self, app_id: str, bot_name: str, service_url: str) -> None:
        self.app_id = app_id
        self.bot_name = bot_name
        self.service_url = service_url

    @property
    def bot(self) -> dict[str, Any]:
        return {"id": f"28:{self.app_id}", "name": self.bot_name}

    def install(self, conversation: Conversation, now: datetime) -> list[dict[str, Any]]:
        """installationUpdate `add`, then conversationUpdate with the bot in membersAdded."""
        return [
            {**self._base("installationUpdate", conversation, now), "action": "add"},
            self._members(conversation, now, "membersAdded", "teamMemberAdded"),
        ]

    def remove(self, conversation: Conversation, now: datetime) -> list[dict[str, Any]]:
        """installationUpdate `remove`, then conversationUpdate with the bot removed."""
        return [
            {**self._base("installationUpdate", conversation, now), "action": "remove"},
            self._members(conversation, now, "membersRemoved", "teamMemberRemoved"),
        ]

    def invoke_action(
        self,
        conversation: Conversation,
        activity_id: str,
        verb: str,
        data: Any,
        user: dict[str, Any],
        now: datetime,
    ) -> dict[str, Any]:
        """A click on `Action.Execute` `verb` of our card `activity_id` by `user`."""
        activity = self._base("invoke", conversation, now, sender=user)
        if conversation.conversation_type == "channel":
            thread = f"{conversation.channel_id};messageid={activity_id}"
            activity["conversation"] = {**activity["conversation"], "id": thread}
        activity.update(
            {
                "name": "adaptiveCard/action",
                "replyToId": activity_id,
                "value": {
                    "action": {"type": "Action.Execute", "verb": verb, "data": data},
                    "trigger": "manual",
                },
            }
        )
        return activity

    def _members(
        self, conversation: Conversation, now: datetime, key: str, team_event: str
    ) -> dict[str, Any]:
        activity = self._base("conversationUpdate", conversation, now)
        activity[key] = [{"id": self.bot["id"]}]
        if conversation.conversation_type == "channel":
            activity["channelData"]["eventType"] = team_event
        return activity

    def _base(
        self,
        kind: str,
        conversation: Conversation,
        now: datetime,
        sender: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        return {
            "type": kind,
            "id": f"f:{next(_ids):016d}",
            "timestamp": iso_millis(now),
            "serviceUrl": self.service_url,
            "channelId": "msteams",
            "from": sender or _person(conversation),
            "recipient": self.bot,
            "conversation": conversation.account(),
            "channelData": channel_data(conversation),
            "locale": "en-US",
        }


def _person(conversation: Conversation) -> dict[str, Any]:
    if conversation.user_id is not None:
        person = {"id": conversation.user_id}
        if conversation.user_aad_id is not None:
            person["aadObjectId"] = conversation.user_aad_id
        return person
    return {"id": INSTALLER}


def channel_data(conversation: Conversation) -> dict[str, Any]:
    data: dict[str, Any] = {"tenant": {"id": conversation.tenant_id}}
    if conversation.conversation_type == "channel":
        data["team"] = {
            "id": conversation.team_id,
            "name": conversation.team_name,
            "aadGroupId": conversation.aad_group_id,
        }
        data["channel"] = {"id": conversation.channel_id, "name": conversation.name}
        data["settings"] = {"selectedChannel": {"id": conversation.channel_id}}
    return data
