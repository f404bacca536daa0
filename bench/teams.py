"""The benchmark's Microsoft Teams side (issue 31 point 8): the Teams stand-in as a process
(emulator.run_teams.TeamsStandInProcess), each run's conversations in it and in Firestore,
and what it recorded in the shape bench.metrics reads.

A Teams run is a contender run of `ours` whose due one-offs name `teams_conversation` (a
team's channel each) instead of `channel`: the same pass, claims, pacing and ledger, posting
through the Teams transport (the Teams SDK's ApiClient, MSAL's token) to the stand-in, under
Teams' own rate limits (7 a second per conversation, ..., 50 a second per tenant:
emulator/teams_rate_limits.py). The conversations are written to `teams_conversations` as
the `teams` target stores an install (not through it: installs are not what is measured).
Every send answers `latency_ms` after it was recorded, as the Slack stand-in does.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from google.cloud import firestore

from bench.seeding import BATCH
from core.documents.teams_conversations import (
    ConversationStatus,
    ConversationType,
    ConversationWrite,
)
from core.store import TEAMS_CONVERSATIONS
from emulator.run_teams import TeamsStandInProcess

# The bench's team: every run's conversations are channels of it.
AAD_GROUP = "5a6b7c8d-0000-4000-8000-0000000be7c4"
TEAM = "19:bench-team@thread.tacv2"


class TeamsBench:
    """The Teams stand-in for a benchmark: reset and set up per run, read after it."""

    def __init__(self, latency_ms: float) -> None:
        self._latency_ms = latency_ms
        self.standin = TeamsStandInProcess()
        self._tenant = ""

    @property
    def pid(self) -> int:
        return self.standin.pid

    def env(self) -> dict[str, str]:
        return self.standin.env()

    def stop(self) -> None:
        self.standin.stop()

    def reset(self) -> None:
        """No conversations, posts or calls; Teams' own rate limits; every send answered
        `latency_ms` after it was recorded (an after-record `timeout` fault that is never
        spent: it answers as Teams would, only later)."""
        self.standin.control("POST", "reset")
        if self._latency_ms > 0:
            delay = {"kind": "timeout", "delay": self._latency_ms / 1000, "after_record": True}
            self.standin.control("POST", "faults", delay | {"operation": "send"})

    def install(self, db: firestore.Client, conversations: list[str], now: datetime) -> None:
        """Each conversation as a channel with our bot in the stand-in, and stored in
        `teams_conversations` as installed, where the transport looks it up."""
        places: list[dict[str, Any]] = []
        for conversation in conversations:
            spec = {"conversation_id": conversation, "name": conversation.split(":")[1][:20]}
            spec |= {"team_id": TEAM, "aad_group_id": AAD_GROUP}
            places.append(self.standin.control("POST", "channel", spec))
        service_url = f"{self.standin.url}/teams/"
        for start in range(0, len(places), BATCH):
            batch = db.batch()
            for place in places[start : start + BATCH]:
                stored = ConversationWrite(
                    service_url=service_url,
                    tenant_id=place["tenant_id"],
                    conversation_type=ConversationType.CHANNEL,
                    name=place["name"],
                    team_id=TEAM,
                    aad_group_id=AAD_GROUP,
                    channel_id=place["id"],
                    status=ConversationStatus.INSTALLED,
                    installed_at=now,
                    updated_at=now,
                )
                ref = db.collection(TEAMS_CONVERSATIONS).document(place["id"])
                batch.set(ref, stored.to_document())
            batch.commit()

    def posts(self) -> list[dict[str, Any]]:
        """Every activity our bot posted, as bench.metrics reads a Slack post: the
        conversation as `channel`, when it was recorded (`received_at`, epoch seconds) and
        the delivery id its card carries (the Container wrapping the card's body)."""
        app_id = self.standin.env()["TEAMS_APP_ID"]
        return [
            {
                "channel": recorded["conversation_id"],
                "received_at": datetime.fromisoformat(recorded["created"]).timestamp(),
                "metadata": {"event_payload": {"delivery_id": _delivery_id(recorded)}},
            }
            for recorded in self.standin.control("GET", "activities")
            if recorded["from_app_id"] == app_id
        ]

    def sends(self) -> int:
        """Sends that came in with a valid token, whatever the answer (429s included)."""
        calls: int = self.standin.control("GET", "calls?operation=send")["calls"]
        return calls


def _delivery_id(recorded: dict[str, Any]) -> str | None:
    for attachment in recorded["activity"].get("attachments") or []:
        for element in (attachment.get("content") or {}).get("body") or []:
            if element.get("type") == "Container" and element.get("id"):
                return str(element["id"])
    return None
