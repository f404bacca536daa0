"""What a request needs to do work: settings, the Firestore client, the Slack transport, a
clock and this worker's identity. Built once per process per settings and reused, so a warm
Cloud Function keeps its gRPC channel and HTTP connections."""

from __future__ import annotations

import functools
import os
import socket
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from google.cloud import firestore

from core.clock import Clock, SystemClock
from core.platform import TEAMS, Destination, Platform
from core.settings import Settings
from core.slack import SlackTransport
from core.store import make_client
from core.teams import TeamsTransport, stored_conversations
from core.unconfigured import Unconfigured


class RecentPosts:
    """When Slack last answered this process's post in each channel, kept across passes: a
    worker that runs passes back to back (`python -m targets.worker --until-idle`) must not post
    to a channel again within the pacing interval just because a new pass began."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._answered: dict[str, datetime] = {}

    def note(self, channel: str, answered: datetime) -> None:
        with self._lock:
            self._answered[channel] = max(answered, self._answered.get(channel, answered))

    def next_slots(
        self, now: datetime, interval: Callable[[str], timedelta]
    ) -> dict[str, datetime]:
        """The channels still inside their interval at `now`, and when each frees up. Older
        entries are dropped, so the record stays as small as the last interval's posts."""
        with self._lock:
            self._answered = {c: t for c, t in self._answered.items() if t + interval(c) > now}
            return {c: t + interval(c) for c, t in self._answered.items()}


class KnownDocuments:
    """What this process last read or wrote of documents it writes conditionally, by id,
    each kept until a given time: a warm worker's next conditioned write of one of them needs
    no read first (processor.channel_slots keeps the channels' pacing slots here)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[datetime, Any]] = {}
        self._next_prune: datetime | None = None

    def get(self, key: str, now: datetime) -> Any | None:
        with self._lock:
            entry = self._entries.get(key)
        return entry[1] if entry is not None and entry[0] > now else None

    def put(self, key: str, value: Any, until: datetime, now: datetime) -> None:
        with self._lock:
            self._entries[key] = (until, value)
            if self._next_prune is None or now >= self._next_prune:
                # Expired entries go once a minute, so the memory stays as small as what
                # is still useful.
                self._entries = {k: e for k, e in self._entries.items() if e[0] > now}
                self._next_prune = now + timedelta(minutes=1)

    def forget(self, key: str) -> None:
        with self._lock:
            self._entries.pop(key, None)


@dataclass(frozen=True)
class Runtime:
    settings: Settings
    db: firestore.Client
    slack: SlackTransport
    clock: Clock
    worker_id: str
    # Shared by with_clock() copies: the same process, the same channels.
    recent_posts: RecentPosts = field(default_factory=RecentPosts, compare=False)
    known_slots: KnownDocuments = field(default_factory=KnownDocuments, compare=False)
    # Microsoft Teams (core.teams), when TEAMS_APP_ID is set.
    teams: TeamsTransport | None = None

    def with_clock(self, clock: Clock) -> Runtime:
        teams = self.teams.with_clock(clock) if self.teams is not None else None
        return replace(self, clock=clock, slack=self.slack.with_clock(clock), teams=teams)

    def platform(self, name: str) -> Platform:
        """The transport of the platform `name` (core.platform): Slack, or Teams, which
        answers every call with `teams_not_configured` when this deployment has no bot."""
        if name == TEAMS:
            return self.teams if self.teams is not None else Unconfigured(TEAMS)
        return self.slack

    def to(self, destination: Destination) -> Platform:
        return self.platform(destination.platform)


def new_worker_id() -> str:
    """Unique per process and start, so a restarted worker never mistakes an old lease of
    its predecessor for its own."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


@functools.lru_cache(maxsize=4)
def runtime_for(settings: Settings) -> Runtime:
    clock = SystemClock()
    db = make_client(settings.project)
    return Runtime(
        settings=settings,
        db=db,
        slack=SlackTransport(
            # Only a local stand-in is ever reached without a token (settings enforce it).
            token=settings.slack_bot_token or "xoxb-local-stand-in",
            base_url=settings.slack_api_url,
            timeout_seconds=settings.slack_timeout_seconds,
            clock=clock,
        ),
        clock=clock,
        worker_id=new_worker_id(),
        teams=teams_for(settings, db, clock),
    )


def teams_for(settings: Settings, db: firestore.Client, clock: Clock) -> TeamsTransport | None:
    """The Teams transport when this deployment has a bot (TEAMS_APP_ID). Its posts share
    SLACK_TIMEOUT_SECONDS: one post deadline and one reconciliation window for both."""
    if not settings.teams_app_id:
        return None
    conversations = stored_conversations(db, settings.teams_app_id)
    return TeamsTransport(settings, conversations, settings.slack_timeout_seconds, clock)
