"""Turn a message's Markdown source into what Slack is sent: the one function both the
processor and every preview call, so a preview is exactly what will be posted.

This is the security boundary for user text (formatting/escape.py): `&`, `<` and `>` are
escaped except inside the Slack entities an author writes on purpose, and broadcasts are
neutralised unless the message sets `allow_broadcast`.

Blocks are sent whenever Slack takes them (at most 50 sections and 12,000 characters across
them), not only for long messages, and slack_sdk validates every such post's layout before
it leaves. `text` always holds the whole mrkdwn: notifications, search and clients without
Block Kit show it, and a message too long for blocks is sent as that text alone, which Slack
renders as the same mrkdwn. A message whose mrkdwn exceeds the 40,000 characters
chat.postMessage keeps is refused (`message_too_long`), never sent cut.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.errors import DocumentError
from formatting.blocks import section_blocks
from formatting.escape import escape
from formatting.markdown import join, to_blocks

# `escape` stays importable from here: code that builds its own Slack text (alerts) uses it.
__all__ = ["RENDER_VERSION", "SlackMessage", "escape", "to_slack"]

TEXT_LIMIT = 40_000
# The version of what `to_slack` makes of a source. Bump it in the same change as anything
# that alters its output (formatting/markdown.py, blocks.py, escape.py, this module): a
# rotation day's post pins the version that rendered it, and an update that must name
# another member re-renders its template only under the same version
# (rotations.render.handed_on). tests/formatting/test_golden.py ties each version to its
# golden file, so an output change that forgets the bump fails there.
RENDER_VERSION = 1


@dataclass(frozen=True)
class SlackMessage:
    text: str
    blocks: list[dict[str, Any]] | None = None


def to_slack(source: str, *, allow_broadcast: bool = False) -> SlackMessage:
    rendered = to_blocks(source, allow_broadcast=allow_broadcast)
    if not rendered:
        raise DocumentError("empty_text", "the text renders to nothing Slack can show")
    text = join(rendered)
    if len(text) > TEXT_LIMIT:
        raise DocumentError(
            "message_too_long",
            f"the formatted message is {len(text):,} characters (escaping included);"
            f" Slack keeps at most {TEXT_LIMIT:,}",
        )
    return SlackMessage(text=text, blocks=section_blocks(rendered))
