"""Turn a message's Markdown source into what Teams is sent: the one function the Teams
platform and every Teams preview call, so a preview is exactly what will be posted.

This is the security boundary for user text in Teams (formatting/teams_escape.py): nothing
the author typed becomes HTML, a tag or a mention; a person is mentioned only by a Teams
mention (`<@29:…>`, what a rotation's `{member}` fills in), and broadcast words are
neutralised unless the message sets `allow_broadcast`.

Teams refuses a bot message over 100 KB, measured as the whole activity encoded as UTF-16
(413 `MessageSizeTooBig`; Microsoft, "Format your bot messages",
https://learn.microsoft.com/en-us/microsoftteams/platform/bots/how-to/format-your-bot-messages,
ms.date 2025-03-11, read 2026-12-03; the 28 KB figure on other pages is incoming webhooks').
The rendered activity is measured the same way, with room kept for what the transport adds
(the Container holding the delivery id, the conversation and bot ids), and a message that
would not fit is refused (`message_too_long`), never sent cut.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from core.errors import DocumentError
from formatting.teams_blocks import render_card
from formatting.teams_message import TeamsMessage

CARD_CONTENT_TYPE = "application/vnd.microsoft.card.adaptive"
ACTIVITY_LIMIT = 100 * 1024  # bytes of the activity as UTF-16
# What the transport adds around the card: the delivery id's Container, `from`,
# `recipient`, `conversation`, `serviceUrl` (a few hundred characters, as UTF-16).
TRANSPORT_ROOM = 4 * 1024
# The version of what `to_teams` makes of a source: bump it with any change of its output
# (tests/formatting/test_teams_golden.py ties each version to its golden file), as
# formatting.slack_text.RENDER_VERSION is for Slack.
TEAMS_RENDER_VERSION = 2


def to_teams(source: str, *, allow_broadcast: bool = False) -> TeamsMessage:
    card, text, mentions = render_card(source, allow_broadcast=allow_broadcast)
    if not card.get("body"):
        raise DocumentError("empty_text", "the text renders to nothing Teams can show")
    return checked(TeamsMessage(text=text, card=card, mentions=mentions.entities))


def activity_size(message: TeamsMessage) -> int:
    """Bytes of the message as a Teams activity encoded as UTF-16, as Teams measures it."""
    activity = {
        "type": "message",
        "text": message.text,
        "attachments": [{"contentType": CARD_CONTENT_TYPE, "content": message.card}],
    }
    return len(json.dumps(activity, ensure_ascii=False, separators=(",", ":")).encode("utf-16-le"))


def checked(message: TeamsMessage) -> TeamsMessage:
    """`message`, or DocumentError `message_too_long` when Teams would refuse its size."""
    size = activity_size(message)
    limit = ACTIVITY_LIMIT - TRANSPORT_ROOM
    if size > limit:
        raise DocumentError(
            "message_too_long",
            f"the Teams card is {size:,} bytes as UTF-16 (escaping included);"
            f" Teams takes at most {limit:,} for a message",
        )
    return message


def with_card(message: TeamsMessage, **fields: Any) -> TeamsMessage:
    """`message` with top-level card fields set (actions, msteams), size checked."""
    return checked(replace(message, card={**message.card, **fields}))
