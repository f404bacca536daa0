"""What a test sets and reads on the Teams stand-in in-process: conversations and rosters, RSC
grants, faults, rate limits, Graph's paging, someone else's messages, and what came in.

A mixin of TeamsStandIn (emulator/teams_standin.py): every method holds the stand-in's lock.
The same controls are reachable over HTTP (emulator/teams_control_http.py).
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass
from typing import Any

from core.clock import Clock
from emulator.armed_faults import InjectsFaults
from emulator.teams_connector import ADAPTIVE_CARD, Activities, RecordedActivity, check_activity
from emulator.teams_conversations import Conversation, Rosters, personal_conversation_id
from emulator.teams_faults import Fault, Faults
from emulator.teams_graph import Graph, graph_chat_id
from emulator.teams_rate_limits import TEAMS_LIMITS, TENANT_LIMITS, RateLimits, Windows
from emulator.teams_tokens import BOT_SCOPE, TokenIssuer


@dataclass(frozen=True)
class Call:
    operation: str  # send, update, create_conversation, graph, openid, keys
    conversation: str | None


class StandInControls(InjectsFaults[Fault]):
    app_id: str
    tenant_id: str
    _lock: threading.RLock
    _clock: Clock
    _tokens: TokenIssuer
    _rosters: Rosters
    _activities: Activities
    _faults: Faults
    _limits: RateLimits
    _graph: Graph
    _calls: list[Call]

    # -- conversations and rosters ---------------------------------------------------------

    def add_conversation(self, conversation: Conversation) -> Conversation:
        with self._lock:
            return self._rosters.add(conversation)

    def channel(
        self,
        conversation_id: str = "19:general0001@thread.tacv2",
        *,
        name: str = "General",
        team_id: str | None = None,
        team_name: str = "Scheduler Team",
        aad_group_id: str = "5a6b7c8d-0000-4000-8000-00000000a001",
    ) -> Conversation:
        """A team's channel with our bot installed (the team's id defaults to General's)."""
        return self.add_conversation(
            Conversation(
                conversation_id,
                "channel",
                self.tenant_id,
                name=name,
                team_id=team_id or conversation_id,
                team_name=team_name,
                aad_group_id=aad_group_id,
            )
        )

    def group_chat(
        self, conversation_id: str = "19:groupchat0001@thread.v2", *, name: str | None = None
    ) -> Conversation:
        return self.add_conversation(
            Conversation(conversation_id, "groupChat", self.tenant_id, name=name)
        )

    def personal(
        self, user_id: str = "29:1person", *, user_aad_id: str | None = None
    ) -> Conversation:
        """The personal chat between our bot and `user_id`, with the bot installed."""
        aad_id = user_aad_id or str(uuid.uuid5(uuid.NAMESPACE_URL, user_id))
        return self.add_conversation(
            Conversation(
                personal_conversation_id(user_id, self.tenant_id),
                "personal",
                self.tenant_id,
                user_id=user_id,
                user_aad_id=aad_id,
            )
        )

    def set_roster(
        self, conversation_id: str, *, installed: bool | None = None, blocked: bool | None = None
    ) -> None:
        with self._lock:
            conversation = self._rosters.get(conversation_id)
            if conversation is None:
                raise KeyError(f"no conversation {conversation_id!r}; add it first")
            if installed is not None:
                conversation.installed = installed
            if blocked is not None:
                conversation.blocked = blocked

    def conversation(self, conversation_id: str) -> Conversation:
        with self._lock:
            conversation = self._rosters.get(conversation_id)
        if conversation is None:
            raise KeyError(f"no conversation {conversation_id!r}")
        return conversation

    def conversations(self) -> list[Conversation]:
        with self._lock:
            return list(self._rosters.all())

    def graph_chat_id(self, conversation_id: str) -> str | None:
        """The id Graph reads a chat by (a personal chat's is not its `a:` id)."""
        return graph_chat_id(self.conversation(conversation_id), self.app_id)

    # -- Graph -----------------------------------------------------------------------------

    def grant(self, conversation_id: str, permission: str, granted: bool = True) -> None:
        """Resource-specific consent: ChannelMessage.Read.Group (a channel's team) or
        ChatMessage.Read.Chat (a chat); granted=False takes it back."""
        with self._lock:
            self._graph.grant(self.conversation(conversation_id), permission, granted)

    def set_short_pages(self, short: bool) -> None:
        """Graph pages run half, empty, full, ... of the page size while more remain."""
        with self._lock:
            self._graph.short_pages = short

    def add_message(
        self,
        conversation_id: str,
        text: str | None = None,
        *,
        card: dict[str, Any] | None = None,
        user: str = "29:1someone",
        user_name: str = "Someone",
        app_id: str | None = None,
        app_name: str | None = None,
    ) -> str:
        """A message someone else posted: a person, or another bot (`app_id`). No roster
        checks or limits: it is already there. Returns its id."""
        activity: dict[str, Any] = {"type": "message"}
        if text is not None:
            activity["text"] = text
        if card is not None:
            activity["attachments"] = [{"contentType": ADAPTIVE_CARD, "content": card}]
        check_activity(activity)
        if app_id is not None:
            sender = {"id": f"28:{app_id}", "name": app_name or "another-bot"}
        else:
            sender = {"id": user, "name": user_name}
        with self._lock:
            conversation = self.conversation(conversation_id)
            recorded = self._activities.record(
                conversation, activity, self._clock.now(), sender, app_id
            )
        return recorded.id

    # -- faults and rate limits ------------------------------------------------------------

    def set_rate_limit(self, windows: Windows | None, tenant: Windows | None = None) -> None:
        """Windows of (calls, per_seconds) on the stand-in's clock, per conversation and per
        tenant; None: no limit. The default is Teams' own (emulator/teams_rate_limits.py:
        TEAMS_LIMITS per conversation, TENANT_LIMITS per tenant)."""
        with self._lock:
            self._limits.set(windows, tenant)

    # -- inspection ------------------------------------------------------------------------

    def activities(self, conversation_id: str | None = None) -> list[RecordedActivity]:
        """Every activity in order posted (ours and add_message's), as it stands now."""
        with self._lock:
            every = self._activities.all()
        if conversation_id is None:
            return every
        base = conversation_id.split(";", 1)[0]
        return [a for a in every if a.conversation_id.split(";", 1)[0] == base]

    def updates(self) -> list[RecordedActivity]:
        """Every update taken, in order, as the activity stood after it."""
        with self._lock:
            return self._activities.updates()

    def delivery_ids(self) -> list[str | None]:
        """The delivery_id (the card's wrapping Container id) of each of our activities."""
        return [a.delivery_id for a in self.activities() if a.from_app_id == self.app_id]

    def calls(self, operation: str | None = None, conversation: str | None = None) -> int:
        """Authenticated calls that came in, whatever the answer (429s and faults included)."""
        base = None if conversation is None else conversation.split(";", 1)[0]
        with self._lock:
            return sum(
                1
                for c in self._calls
                if operation in (None, c.operation)
                and base in (None, (c.conversation or "").split(";", 1)[0])
            )

    def token_grants(self) -> int:
        with self._lock:
            return self._tokens.grants

    def issue_token(self, scope: str = BOT_SCOPE) -> str:
        """A live token without the grant, for tests that are not about Entra."""
        with self._lock:
            return self._tokens.issue(scope, self._clock.now())

    def reset(self) -> None:
        """Back to fresh: no conversations, activities, calls, faults or grants, Teams' own
        rate limits, full pages. Issued tokens and signing keys stay valid."""
        with self._lock:
            self._rosters.clear()
            self._activities.clear()
            self._calls.clear()
            self._faults.clear()
            self._limits.set(TEAMS_LIMITS, TENANT_LIMITS)
            self._graph.clear()
