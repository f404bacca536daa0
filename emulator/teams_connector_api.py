"""The Bot Connector v3 routes of the Teams stand-in: which call a request is, and what it
does to the conversations and activities. Authentication, rate limits and faults are the
stand-in's, around these (emulator/teams_standin.py).

Sources (read 2026-12-03): learn.microsoft.com/azure/bot-service/rest-api/
bot-framework-rest-connector-api-reference (Send to Conversation, Update Activity, Create
Conversation); learn.microsoft.com/microsoftteams/platform/bots/how-to/conversations/
send-proactive-messages ("Create the conversation": a personal chat opens only with a user
who has the app; the same conversation id for the same user).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.clock import Clock
from emulator.http_reply import Reply, json_reply
from emulator.teams_connector import Activities, check_activity
from emulator.teams_conversations import Rosters, personal_conversation_id
from emulator.teams_http import ServiceError

Route = tuple[str, str | None, Callable[[Any], Reply]]  # operation, conversation, action


class ConnectorApi:
    def __init__(
        self,
        rosters: Rosters,
        activities: Activities,
        clock: Clock,
        app_id: str,
        bot_name: str,
        tenant_id: str,
        service_url: Callable[[], str],
    ) -> None:
        self.rosters = rosters
        self.activities = activities
        self._clock = clock
        self.app_id = app_id
        self.bot_name = bot_name
        self.tenant_id = tenant_id
        self._service_url = service_url

    def route(self, method: str, parts: list[str]) -> Route | None:
        if method == "POST" and parts == ["conversations"]:
            return "create_conversation", None, self._create_conversation
        if len(parts) >= 3 and parts[0] == "conversations" and parts[2] == "activities":
            conversation_id = parts[1]
            if method == "POST" and len(parts) == 3:
                return "send", conversation_id, lambda body: self._send(conversation_id, body)
            if method == "PUT" and len(parts) == 4:
                activity_id = parts[3]
                return (
                    "update",
                    conversation_id,
                    lambda body: self._update(conversation_id, activity_id, body),
                )
        return None

    def _bot_account(self) -> dict[str, Any]:
        return {"id": f"28:{self.app_id}", "name": self.bot_name}

    def _send(self, conversation_id: str, body: Any) -> Reply:
        conversation = self.rosters.postable(conversation_id)
        activity = check_activity(body)
        recorded = self.activities.record(
            conversation, activity, self._clock.now(), self._bot_account(), self.app_id
        )
        return json_reply({"id": recorded.id}, 201)

    def _update(self, conversation_id: str, activity_id: str, body: Any) -> Reply:
        conversation = self.rosters.postable(conversation_id)
        activity = check_activity(body)
        updated = self.activities.update(conversation, activity_id, activity, self._clock.now())
        return json_reply({"id": updated.id})

    def _create_conversation(self, body: Any) -> Reply:
        """Only what a proactive DM needs: one member, not a group (personal)."""
        if not isinstance(body, dict):
            raise ServiceError(400, "BadArgument", "The request body must be a JSON object.")
        members = body.get("members")
        if not isinstance(members, list) or len(members) != 1 or not isinstance(members[0], dict):
            raise ServiceError(400, "BadArgument", "members must hold exactly one member.")
        if body.get("isGroup"):
            raise ServiceError(400, "BadArgument", "Only personal conversations can be created.")
        user_id = members[0].get("id")
        if not isinstance(user_id, str) or not user_id.startswith("29:"):
            raise ServiceError(400, "BadArgument", "members[0].id must be a user id (29:…).")
        tenant = body.get("tenantId") or (body.get("channelData") or {}).get("tenant", {}).get("id")
        conversation_id = personal_conversation_id(user_id, tenant or self.tenant_id)
        conversation = self.rosters.get(conversation_id)
        if conversation is None:
            # Teams opens a personal chat only with someone who has the app.
            raise ServiceError(
                403, "BotNotInConversationRoster", "The bot is not installed for this user."
            )
        self.rosters.postable(conversation_id)
        return json_reply({"id": conversation_id, "serviceUrl": self._service_url()}, 201)
