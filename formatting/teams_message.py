"""What a Teams post is before it is sent: one Adaptive Card, the plain text Teams shows
where the card cannot be (notifications, the activity feed), and the mentions the card's
text names. The transport (core.teams) wraps it in an activity that carries the delivery
id; the renderer (formatting.teams_card) makes it from a message's Markdown."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TeamsMessage:
    # The activity's `summary`/`text` fallback: never markup, never a mention.
    text: str
    # The Adaptive Card, as JSON (`{"type": "AdaptiveCard", "version": ..., "body": [...]}`).
    card: dict[str, Any]
    # The card's `msteams.entities`: one `mention` per `<at>…</at>` in its text.
    mentions: list[dict[str, Any]] = field(default_factory=list)
