"""An event as the pipeline reads it: what its one send posts, and where."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.documents.events import EventField
from core.documents.people import NO_HOLDS, Holds
from core.errors import DocumentError
from core.models import CHANNEL_ID, teams_conversation
from core.platform import SLACK


@dataclass(frozen=True)
class Event:
    """A stored event, validated for sending. `channel` is where it posts: the conversation
    the caller named, or the DM with `user` that the first caller's request opened."""

    id: str  # the sha256 of `key`
    key: str
    channel: str
    text: str
    created_at: datetime
    user: str | None = None
    category: str | None = None  # a `categories` id: the person's gates apply (processor.gates)
    holds: Holds = NO_HOLDS  # what its claim reserved on the person's gates
    platform: str = SLACK  # TEAMS: `channel` is its `teams_conversation`

    @property
    def timezone(self) -> str:
        """Whose local days a daily cap counts an event on: an event has no timezone; UTC."""
        return "UTC"

    @classmethod
    def from_document(cls, doc_id: str, data: dict[str, Any]) -> Event:
        key, text = data.get(EventField.KEY), data.get(EventField.TEXT)
        channel, created = data.get(EventField.CHANNEL), data.get(EventField.CREATED_AT)
        user, category = data.get(EventField.USER), data.get(EventField.CATEGORY)
        if not isinstance(key, str) or not isinstance(text, str) or not text.strip():
            raise DocumentError("invalid_event", "an event needs its key and a text")
        teams = teams_conversation(data)
        if teams is not None:
            channel = teams.conversation
        elif not isinstance(channel, str) or not CHANNEL_ID.match(channel):
            raise DocumentError("invalid_channel", f"channel {channel!r} is not a Slack id")
        if not isinstance(created, datetime):
            raise DocumentError("invalid_event", "an event needs its created_at")
        return cls(
            doc_id,
            key,
            channel,
            text,
            created,
            user if isinstance(user, str) else None,
            category if isinstance(category, str) else None,
            platform=SLACK if teams is None else teams.platform,
        )
