"""A message's actions as Adaptive Card `Action.Execute` buttons (Universal Actions), and the
card as updated after people click, as formatting/buttons.py does for Slack.

Each button's `verb` is the action id and its `data` is `{"value": button_value(delivery,
action)}`: the invoke activity Teams sends on a click carries both back, and, as on Slack,
what the click means is read from the catalog pinned at the send, never from the card.
Styles map to Teams' own: `primary` → `positive`, `danger` → `destructive`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from microsoft_teams.cards import ExecuteAction, TextBlock

from core.actions import Action, button_value
from formatting.teams_card import with_card
from formatting.teams_escape import markdown_text
from formatting.teams_inline import Mentions
from formatting.teams_message import TeamsMessage

_STYLES: dict[str, Any] = {"primary": "positive", "danger": "destructive"}
# Answers shown by name; more are counted, so a busy post stays under Teams' size limit.
MAX_ANSWER_LINES = 50

# Who answered: a Teams user id, or (id, display name) when the click named them.
Answerer = str | tuple[str, str]


def with_teams_actions(
    message: TeamsMessage, delivery_id: str, actions: tuple[Action, ...]
) -> TeamsMessage:
    """`message` with one `Action.Execute` per action; DocumentError `message_too_long`
    when the buttons would take the card over Teams' size limit."""
    if not actions:
        return message
    return with_card(message, actions=[_button(delivery_id, action) for action in actions])


def _button(delivery_id: str, action: Action) -> dict[str, Any]:
    button = ExecuteAction(
        title=action.label,
        verb=action.id,
        data={"value": button_value(delivery_id, action.id)},
        style=_STYLES.get(action.style or ""),
    )
    return button.model_dump(exclude_none=True)


def teams_answered(
    message: TeamsMessage,
    delivery_id: str,
    actions: tuple[Action, ...],
    answers: Sequence[tuple[Answerer, Action]],
    *,
    closed: bool,
) -> TeamsMessage:
    """The card as updated after clicks: its body, its buttons unless `closed` (the one
    answer is in), and a line per answer naming the person (a mention) and the label
    (from the catalog, escaped like any text)."""
    base = message if closed else with_teams_actions(message, delivery_id, actions)
    if not answers:
        return base
    mentions = Mentions(list(base.mentions))
    lines = [_line(who, action, mentions) for who, action in answers[:MAX_ANSWER_LINES]]
    if len(answers) > MAX_ANSWER_LINES:
        lines.append(f"and {len(answers) - MAX_ANSWER_LINES} more")
    block = TextBlock(text="\n\n".join(lines), wrap=True, is_subtle=True, separator=True)
    body = [*base.card.get("body", []), block.model_dump(exclude_none=True)]
    msteams = {**base.card.get("msteams", {}), "entities": mentions.entities}
    updated = TeamsMessage(base.text, base.card, mentions.entities)
    return with_card(updated, body=body, msteams=msteams)


def _line(who: Answerer, action: Action, mentions: Mentions) -> str:
    user_id, name = who if isinstance(who, tuple) else (who, who)
    label = markdown_text(action.label, allow_broadcast=False)
    return f"{mentions.at(user_id, name)} answered **{label}**"


def teams_noted(message: TeamsMessage, note: str) -> TeamsMessage:
    """The card with a subtle line of plain `note` after its body."""
    text = markdown_text(note, allow_broadcast=False)
    block = TextBlock(text=text, wrap=True, is_subtle=True, separator=True)
    return with_card(
        message, body=[*message.card.get("body", []), block.model_dump(exclude_none=True)]
    )
