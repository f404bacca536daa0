"""What a signed Slack request to the `interactions` target is, before anything acts on it.

Slack sends three shapes to one Request URL (api.slack.com: interactivity, slash commands,
Events API):
- `application/x-www-form-urlencoded` with `payload` (JSON): interactivity, by its `type`:
  `block_actions` (a button on a message, or on a view such as the Home tab),
  `view_submission`, `view_closed`, `message_action` (a message shortcut), `shortcut`;
- `application/x-www-form-urlencoded` with `command`: a slash command, its form fields as is;
- `application/json`: the Events API, `url_verification` or `event_callback`.

`classify` names the shape (`Inbound.kind`) and hands over its fields; a body of none of
these shapes is None. Which code acts on each kind is interactions.dispatch's table."""

from __future__ import annotations

import json
import urllib.parse
from dataclasses import dataclass
from typing import Any

MAX_BODY = 64 * 1024

COMMAND = "command"
URL_VERIFICATION = "url_verification"
EVENT = "event_callback"
MESSAGE_ACTIONS = "block_actions"  # a button on a posted message (interactions.click)
VIEW_ACTIONS = "view_actions"  # a `block_actions` on a view: the Home tab, a modal
VIEW_SUBMISSION = "view_submission"
VIEW_CLOSED = "view_closed"
MESSAGE_SHORTCUT = "message_action"
GLOBAL_SHORTCUT = "shortcut"
_PAYLOAD_KINDS = frozenset(
    {MESSAGE_ACTIONS, VIEW_SUBMISSION, VIEW_CLOSED, MESSAGE_SHORTCUT, GLOBAL_SHORTCUT}
)


@dataclass(frozen=True)
class Inbound:
    """One signed request: its `kind` (the constants above) and its fields: a payload's or
    an event body's JSON object, or a slash command's form fields (one value each)."""

    kind: str
    fields: dict[str, Any]


def classify(body: bytes) -> Inbound | None:
    if len(body) > MAX_BODY:
        return None
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if text.lstrip().startswith("{"):
        return _event(text)
    try:
        form = urllib.parse.parse_qs(text, strict_parsing=True, keep_blank_values=True)
    except ValueError:
        return None
    if "payload" in form:
        return _payload(form["payload"][0])
    if COMMAND in form:
        return Inbound(COMMAND, {name: values[0] for name, values in form.items()})
    return None


def _event(text: str) -> Inbound | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("type") not in (URL_VERIFICATION, EVENT):
        return None
    return Inbound(str(data["type"]), data)


def _payload(raw: str) -> Inbound | None:
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("type") not in _PAYLOAD_KINDS:
        return None
    kind = str(data["type"])
    container = data.get("container")
    if kind == MESSAGE_ACTIONS and isinstance(container, dict) and container.get("type") == "view":
        kind = VIEW_ACTIONS
    return Inbound(kind, data)
