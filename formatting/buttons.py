"""A message's actions as a Block Kit actions block of buttons, appended after its sections;
and the line that shows who answered what once people click."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from slack_sdk.models.blocks import ActionsBlock, ButtonElement, ContextBlock, MarkdownTextObject

from core.actions import Action, button_value
from core.errors import DocumentError
from formatting.blocks import MAX_BLOCKS
from formatting.escape import escape
from formatting.slack_text import SlackMessage

ACTIONS_BLOCK_ID = "actions"


def with_actions(
    rendered: SlackMessage, delivery_id: str, actions: tuple[Action, ...]
) -> SlackMessage:
    """`rendered` with one button per action, each valued `button_value(delivery_id, id)`.
    A message too long for blocks cannot carry buttons: DocumentError `too_long_for_actions`."""
    if not actions:
        return rendered
    blocks = rendered.blocks
    if blocks is None or len(blocks) + 2 > MAX_BLOCKS:
        raise DocumentError(
            "too_long_for_actions", "a message with actions must fit in Slack's blocks"
        )
    return replace(rendered, blocks=[*blocks, actions_block(delivery_id, actions)])


def actions_block(delivery_id: str, actions: tuple[Action, ...]) -> dict[str, Any]:
    buttons = [
        ButtonElement(
            text=action.label,
            action_id=action.id,
            value=button_value(delivery_id, action.id),
            style=action.style,
        )
        for action in actions
    ]
    # to_dict() runs slack_sdk's validation of the block.
    return ActionsBlock(block_id=ACTIONS_BLOCK_ID, elements=buttons).to_dict()


def answered(
    rendered: SlackMessage,
    delivery_id: str,
    actions: tuple[Action, ...],
    answers: list[tuple[str, Action]],
    *,
    closed: bool,
) -> SlackMessage:
    """The message as updated after clicks: its sections, its buttons unless `closed` (the
    one answer is in), and a context line per (user id, action) answer. Labels come from the
    catalog (`Action`), escaped like any text."""
    base = rendered if closed else with_actions(rendered, delivery_id, actions)
    lines = [f"<@{escape(user)}> answered *{escape(action.label)}*" for user, action in answers]
    if not lines or base.blocks is None:
        return base
    context = ContextBlock(elements=[MarkdownTextObject(text="\n".join(lines)[:3000])]).to_dict()
    return replace(base, blocks=[*base.blocks, context])


def with_note(rendered: SlackMessage, note: str) -> SlackMessage:
    """`rendered` with a context line of mrkdwn `note` after its blocks."""
    if rendered.blocks is None:
        return rendered
    context = ContextBlock(elements=[MarkdownTextObject(text=note[:3000])]).to_dict()
    return replace(rendered, blocks=[*rendered.blocks, context])
