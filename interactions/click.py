"""A Slack `block_actions` request body as the one click it carries, or nothing.

Slack posts `application/x-www-form-urlencoded` with a `payload` field of JSON. Only what a
click needs is read: who clicked, the button's value (the delivery and action it names,
core.actions), where the message is, and the response_url for an ephemeral reply. Anything
else, or anything of the wrong shape, is not a click."""

from __future__ import annotations

import json
import urllib.parse
from dataclasses import dataclass
from typing import Any

from core.actions import parse_button_value
from core.models import USER_ID
from core.store import is_document_id

MAX_BODY = 64 * 1024


@dataclass(frozen=True)
class Click:
    user: str
    delivery_id: str
    action_id: str
    channel: str | None
    response_url: str | None


def parse_click(body: bytes) -> Click | None:
    if len(body) > MAX_BODY:
        return None
    try:
        form = urllib.parse.parse_qs(body.decode("utf-8"), strict_parsing=True)
        payload = json.loads(form["payload"][0])
    except (UnicodeDecodeError, ValueError, KeyError):
        return None
    return click_from(payload)


def click_from(payload: Any) -> Click | None:
    """The click a `block_actions` payload (its JSON object) carries, or None."""
    if not isinstance(payload, dict) or payload.get("type") != "block_actions":
        return None
    user = _get(payload, "user", "id")
    actions = payload.get("actions")
    if not isinstance(user, str) or not USER_ID.match(user):
        return None
    if not isinstance(actions, list) or len(actions) != 1 or not isinstance(actions[0], dict):
        return None
    named = parse_button_value(actions[0].get("value"))
    if named is None or actions[0].get("action_id") != named[1] or not is_document_id(named[0]):
        return None
    channel = _get(payload, "channel", "id") or _get(payload, "container", "channel_id")
    response_url = payload.get("response_url")
    return Click(
        user,
        named[0],
        named[1],
        channel if isinstance(channel, str) else None,
        response_url if isinstance(response_url, str) else None,
    )


def _get(data: dict[str, Any], *path: str) -> Any:
    value: Any = data
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value
