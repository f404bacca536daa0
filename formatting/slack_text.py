"""Turn a message's Markdown source into what Slack is sent: the one function both the
processor and every preview call, so a preview is exactly what will be posted.

This is the security boundary for user text (formatting/escape.py): `&`, `<` and `>` are
escaped except inside the Slack entities an author writes on purpose, and broadcasts are
neutralised unless the message sets `allow_broadcast`.

Blocks are always sent, not only for long messages: a message then renders the same way
whatever its length, and slack_sdk validates every post's layout before it leaves. `text` is
what notifications, search and clients without Block Kit show; it holds the whole mrkdwn
unless that exceeds the 40,000 characters chat.postMessage keeps, in which case it is cut by
us at a line boundary (never inside an entity, as Slack's own truncation could) and ends
with an ellipsis. The blocks always carry the whole message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.errors import DocumentError
from formatting.blocks import cut_point, section_blocks
from formatting.escape import escape
from formatting.markdown import join, to_blocks

# `escape` stays importable from here: code that builds its own Slack text (alerts) uses it.
__all__ = ["SlackMessage", "escape", "to_slack"]

TEXT_LIMIT = 40_000
_ELLIPSIS = "\n…"


@dataclass(frozen=True)
class SlackMessage:
    text: str
    blocks: list[dict[str, Any]] | None = None


def to_slack(source: str, *, allow_broadcast: bool = False) -> SlackMessage:
    rendered = to_blocks(source, allow_broadcast=allow_broadcast)
    if not rendered:
        raise DocumentError("empty_text", "the text renders to nothing Slack can show")
    return SlackMessage(text=_fallback(join(rendered)), blocks=section_blocks(rendered))


def _fallback(mrkdwn: str) -> str:
    if len(mrkdwn) <= TEXT_LIMIT:
        return mrkdwn
    room = TEXT_LIMIT - len(_ELLIPSIS)
    cut = mrkdwn.rfind("\n", 0, room + 1)
    if cut <= 0:
        cut = cut_point(mrkdwn, room)
    return mrkdwn[:cut].rstrip() + _ELLIPSIS
