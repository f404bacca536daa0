"""A message's Markdown, rendered once for the platform it is posted on: Slack's mrkdwn and
Block Kit (formatting.slack_text), or a Teams Adaptive Card (formatting.teams_card); with
its buttons, and as updated once people answer. The kinds call these, never a platform's
renderer directly, so a kind stays platform-blind."""

from __future__ import annotations

from typing import Any

from core.actions import Action
from core.documents.deliveries import PinnedPost
from core.platform import TEAMS
from formatting import buttons
from formatting.escape import escape
from formatting.slack_text import SlackMessage, to_slack
from formatting.teams_buttons import teams_answered, teams_noted, with_teams_actions
from formatting.teams_card import to_teams
from formatting.teams_message import TeamsMessage

Rendered = SlackMessage | TeamsMessage


def render(platform: str, source: str, *, allow_broadcast: bool = False) -> Rendered:
    """`source` as `platform` shows it; DocumentError when it cannot be sent there."""
    if platform == TEAMS:
        return to_teams(source, allow_broadcast=allow_broadcast)
    return to_slack(source, allow_broadcast=allow_broadcast)


def with_actions(rendered: Rendered, delivery_id: str, actions: tuple[Action, ...]) -> Rendered:
    """`rendered` with one button per action, each valued for `delivery_id`."""
    if isinstance(rendered, TeamsMessage):
        return with_teams_actions(rendered, delivery_id, actions)
    return buttons.with_actions(rendered, delivery_id, actions)


def answered(
    rendered: Rendered,
    delivery_id: str,
    actions: tuple[Action, ...],
    answers: list[tuple[str, Action]],
    *,
    closed: bool,
) -> Rendered:
    """The post as updated after clicks (formatting.buttons.answered, its Teams twin)."""
    if isinstance(rendered, TeamsMessage):
        return teams_answered(rendered, delivery_id, actions, answers, closed=closed)
    return buttons.answered(rendered, delivery_id, actions, answers, closed=closed)


def noted(rendered: Rendered, note: str) -> Rendered:
    """`rendered` with a line of `note` (plain text) after its body."""
    if isinstance(rendered, TeamsMessage):
        return teams_noted(rendered, note)
    return buttons.with_note(rendered, escape(note))


def pinned(rendered: Rendered, member: str | None = None) -> PinnedPost:
    """What a post with buttons pins on its ledger entry, for its updates."""
    if isinstance(rendered, TeamsMessage):
        return PinnedPost(rendered.text, None, member, card=rendered.card)
    return PinnedPost(rendered.text, rendered.blocks, member)


def unpinned(post: PinnedPost) -> Rendered:
    """The post a ledger entry pinned, as its platform takes it again."""
    if post.card is not None:
        return TeamsMessage(post.text, post.card, list(_mentions(post.card)))
    return SlackMessage(post.text, post.blocks)


def _mentions(card: dict[str, Any]) -> list[dict[str, Any]]:
    msteams = card.get("msteams")
    entities = msteams.get("entities") if isinstance(msteams, dict) else None
    return [e for e in entities if isinstance(e, dict)] if isinstance(entities, list) else []
