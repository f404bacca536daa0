"""A message's buttons (`actions`, CONTRACT.md): the server-side catalog a click is checked
against, and the compact value each posted button carries.

A button's `value` names the delivery and the action id and nothing else: what a click
means (its label, whether it is allowed) is always read from the stored catalog, never from
what the client sends back."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from core.errors import DocumentError

MAX_ACTIONS = 5
MAX_ACTION_ID = 64
MAX_LABEL = 75  # Slack's limit on a button's text
STYLES = ("primary", "danger")
# Reserved ids a message's own `actions` may not use (interactions.mute): the button a
# message to a person of an opt-out-able category carries, pinned in its post's catalog
# beside the message's own (so a pinned catalog holds up to MAX_ACTIONS + 1), and the Undo
# the post shows once that person muted the category.
MUTE_CATEGORY = "mute_category"
UNMUTE_CATEGORY = "unmute_category"
RESERVED = (MUTE_CATEGORY, UNMUTE_CATEGORY)


@dataclass(frozen=True)
class Action:
    id: str
    label: str
    style: str | None = None


def catalog(stored: Any, most: int = MAX_ACTIONS) -> tuple[Action, ...]:
    """A stored `actions` list as the catalog (empty when absent); DocumentError
    `invalid_actions` naming the first entry that does not fit the contract."""
    if stored is None:
        return ()
    if not isinstance(stored, list) or not 1 <= len(stored) <= most:
        raise DocumentError("invalid_actions", f"actions must be 1 to {most} entries")
    actions = tuple(_action(entry) for entry in stored)
    ids = [action.id for action in actions]
    if len(set(ids)) != len(ids):
        raise DocumentError("invalid_actions", f"action ids must be unique, got {ids!r}")
    return actions


def _action(entry: Any) -> Action:
    if not isinstance(entry, dict):
        raise DocumentError("invalid_actions", f"action {entry!r} is not a map")
    action_id, label, style = entry.get("id"), entry.get("label"), entry.get("style")
    if not isinstance(action_id, str) or not 1 <= len(action_id) <= MAX_ACTION_ID:
        raise DocumentError("invalid_actions", f"action id {action_id!r} is not 1..64 characters")
    if not isinstance(label, str) or not label.strip() or len(label) > MAX_LABEL:
        raise DocumentError("invalid_actions", f"action label {label!r} is not 1..75 characters")
    if style is not None and style not in STYLES:
        raise DocumentError("invalid_actions", f"action style {style!r} is not primary or danger")
    return Action(action_id, label, style)


def pinned_catalog(stored: Any) -> tuple[Action, ...]:
    """The catalog a ledger entry pinned at the send: a message's own, and perhaps the
    reserved `mute_category` beside them."""
    return catalog(stored, MAX_ACTIONS + 1)


def mute_action(label: str) -> Action:
    """The reserved button that mutes a category, named by its label as of the send."""
    return Action(MUTE_CATEGORY, f"Mute {label}"[:MAX_LABEL])


def to_document(actions: tuple[Action, ...]) -> list[dict[str, Any]]:
    """The catalog as stored (what `catalog` reads back): a message's or rotation's
    `actions`, or the catalog a ledger entry pinned at the send."""
    return [
        {"id": a.id, "label": a.label} | ({"style": a.style} if a.style else {}) for a in actions
    ]


def find(actions: tuple[Action, ...], action_id: str) -> Action | None:
    return next((action for action in actions if action.id == action_id), None)


def button_value(delivery_id: str, action_id: str) -> str:
    """What a posted button carries: compact JSON naming the delivery and the action."""
    return json.dumps({"delivery": delivery_id, "action": action_id}, separators=(",", ":"))


def parse_button_value(value: Any) -> tuple[str, str] | None:
    """(delivery id, action id) from a clicked button's value; None for anything else."""
    if not isinstance(value, str) or len(value) > 2000:
        return None
    try:
        data = json.loads(value)
    except ValueError:
        return None
    if not isinstance(data, dict) or set(data) != {"delivery", "action"}:
        return None
    delivery_id, action_id = data["delivery"], data["action"]
    if not isinstance(delivery_id, str) or not isinstance(action_id, str):
        return None
    return delivery_id, action_id
