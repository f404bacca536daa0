"""A person's Home tab as Block Kit (views.publish's `view`): their scheduled messages (next
run and schedule in words, status, Cancel and Send now), their rotations with who is up, and
one toggle per category they may opt out of.

A view holds at most 100 blocks: each section is capped (a message takes two blocks, a
rotation or a category one), so a full tab is at most 96 blocks, and what is left out is
counted ("and N more in the composer"). Text a person wrote is shown escaped, so it can
neither mention anyone nor break the markup."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.models import USER_ID

# The actions on the tab (interactions.home_actions). Each button's value is the id it acts
# on; Send now's is `send_now_value`: the id and the occurrence the tab showed.
CANCEL = "home_cancel"
SEND_NOW = "home_send_now"
OPT_OUT = "home_opt_out"
OPT_IN = "home_opt_in"

MAX_MESSAGES = 30
MAX_ROTATIONS = 10
MAX_CATEGORIES = 15
_PREVIEW_CHARS = 150


@dataclass(frozen=True)
class MessageRow:
    id: str
    text: str
    status: str
    when: str  # the next run, or why there is none, in words
    schedule: str  # the schedule in words
    cancellable: bool
    occurrence: datetime | None  # the occurrence Send now sends: None, no Send now
    changed_by: str | None = None  # who changed it last, when not the person: a Slack id or email


@dataclass(frozen=True)
class RotationRow:
    name: str
    schedule: str
    up: str  # who is up, in words with mentions


@dataclass(frozen=True)
class Toggle:
    id: str
    label: str
    opted_out: bool


@dataclass(frozen=True)
class HomeTab:
    messages: list[MessageRow]
    more_messages: int
    rotations: list[RotationRow]
    more_rotations: int
    toggles: list[Toggle]
    more_toggles: int
    notice: str | None = None  # what the last action did, or why it was refused


def home_view(tab: HomeTab) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    if tab.notice:
        blocks.append(_section(f":information_source: {escape(tab.notice)}"))
    blocks.append(_header("Your scheduled messages"))
    blocks += [block for row in tab.messages for block in _message(row)]
    if not tab.messages:
        blocks.append(_section("You have no scheduled messages."))
    blocks += _more(tab.more_messages)
    blocks += [{"type": "divider"}, _header("Your rotations")]
    blocks += [_section(f"*{escape(r.name)}*\n{escape(r.schedule)}\n{r.up}") for r in tab.rotations]
    if not tab.rotations:
        blocks.append(_section("You are in no rotations."))
    blocks += _more(tab.more_rotations)
    blocks += [{"type": "divider"}, _header("Your preferences")]
    blocks += [_toggle(toggle) for toggle in tab.toggles]
    if not tab.toggles:
        blocks.append(_section("No category can be opted out of."))
    blocks += _more(tab.more_toggles)
    return {"type": "home", "blocks": blocks}


def send_now_value(message_id: str, occurrence: datetime) -> str:
    return json.dumps({"id": message_id, "at": occurrence.isoformat()}, separators=(",", ":"))


def send_now_target(value: str) -> tuple[str, datetime] | None:
    """The message and occurrence a Send now button names; None when it names none."""
    try:
        data = json.loads(value)
        named = (str(data["id"]), datetime.fromisoformat(data["at"]))
    except (ValueError, TypeError, KeyError):
        return None
    return named if named[1].tzinfo is not None else None


def escape(text: str) -> str:
    """Slack's three control characters, escaped (api.slack.com: formatting text)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _message(row: MessageRow) -> list[dict[str, Any]]:
    preview = row.text if len(row.text) <= _PREVIEW_CHARS else row.text[:_PREVIEW_CHARS] + "…"
    words = f"{escape(preview)}\n*{row.status}* · {escape(row.when)}\n{escape(row.schedule)}"
    if row.changed_by is not None:
        words += f"\nLast changed by {_actor(row.changed_by)}"
    buttons = []
    if row.occurrence is not None:
        buttons.append(_button("Send now", SEND_NOW, send_now_value(row.id, row.occurrence)))
    if row.cancellable:
        buttons.append(_button("Cancel", CANCEL, row.id, style="danger"))
    if not buttons:
        return [_section(words), _context("No action while it is " + row.status + ".")]
    return [_section(words), {"type": "actions", "elements": buttons}]


def _actor(actor: str) -> str:
    """A Slack user id as a mention (Slack shows their name), anyone else as written."""
    return f"<@{actor}>" if USER_ID.match(actor) else escape(actor)


def _toggle(toggle: Toggle) -> dict[str, Any]:
    if toggle.opted_out:
        words, button = "you are opted out", _button("Opt back in", OPT_IN, toggle.id)
    else:
        words, button = "you receive these", _button("Opt out", OPT_OUT, toggle.id)
    return _section(f"*{escape(toggle.label)}*: {words}") | {"accessory": button}


def _more(count: int) -> list[dict[str, Any]]:
    return [_context(f"and {count} more in the composer")] if count > 0 else []


def _header(text: str) -> dict[str, Any]:
    return {"type": "header", "text": {"type": "plain_text", "text": text}}


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}


def _button(label: str, action_id: str, value: str, style: str | None = None) -> dict[str, Any]:
    button = {
        "type": "button",
        "text": {"type": "plain_text", "text": label},
        "action_id": action_id,
        "value": value,
    }
    return button | ({"style": style} if style else {})
