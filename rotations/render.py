"""A rotation turn's message: the template with the member's mention, formatted like every
other message (and never a broadcast). The composer previews with it what is posted."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from core.platform import SLACK
from core.rotation import fill_template
from formatting.render import Rendered, render
from formatting.slack_text import SlackMessage


def render_turn(text: str, member: str, platform: str = SLACK) -> Rendered:
    return render(platform, fill_template(text, member), allow_broadcast=False)


def handed_on(post: Rendered, template: str, old: str, new: str) -> Rendered | None:
    """The post as rendered for `old`, naming `new` instead: every occurrence of `old`'s
    user id becomes `new`'s, in the text and in every string of the blocks. Sound only when
    the template itself never names `old` (then each occurrence came from `{member}`, and
    the formatter copies user ids unchanged); None otherwise."""
    pattern = re.compile(rf"(?<![A-Za-z0-9]){re.escape(old)}(?![A-Za-z0-9])")
    if pattern.search(template):
        return None

    def swap(value: Any) -> Any:
        if isinstance(value, str):
            return pattern.sub(new, value)
        if isinstance(value, list):
            return [swap(item) for item in value]
        if isinstance(value, dict):
            return {key: swap(item) for key, item in value.items()}
        return value

    if isinstance(post, SlackMessage):
        return SlackMessage(swap(post.text), swap(post.blocks))
    return replace(post, text=swap(post.text), card=swap(post.card), mentions=swap(post.mentions))
