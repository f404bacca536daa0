"""A rotation turn's message: the template with the member's mention, formatted like every
other message (and never a broadcast). The composer previews with it what is posted."""

from __future__ import annotations

from core.rotation import fill_template
from formatting.slack_text import SlackMessage, to_slack


def render_turn(text: str, member: str) -> SlackMessage:
    return to_slack(fill_template(text, member), allow_broadcast=False)
