"""Slack-native requests as Slack sends them to an app's Request URL: a slash command, a
message shortcut, a `view_submission`, an Events API `event_callback` and `url_verification`.
The stand-in's control endpoints send these (emulator/slack_native_controls.py) and the
tests build the same bodies (tests/fixtures/slack_native.py).

Shapes follow Slack's published samples: bolt-python's tests (tests/scenario_tests/
test_view_submission.py, test_shortcut.py, test_slash_command.py, test_events.py) and
python-slack-sdk's signature and request tests, and the pages on api.slack.com
(interactivity/slash-commands, reference/interaction-payloads/views, apis/events-api):
- a slash command is `application/x-www-form-urlencoded`, its fields as listed in
  `slash_command`, one value each;
- interactivity (`message_action`, `view_submission`) is form-encoded `payload=<json>`;
- the Events API is `application/json`.
Every body is signed as Slack signs (emulator/slack_clicks.py `signed_headers`)."""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator, Mapping
from typing import Any

from emulator.slack_clicks import form_body
from emulator.slack_users import dm_id

TEAM_ID = "T0001"
TEAM_DOMAIN = "standin"
APP_ID = "A0001"
BOT_ID = "B0001"
BOT_USER_ID = "UBOT"
# Slack still sends the deprecated verification token in every body; apps must not rely on it.
VERIFICATION_TOKEN = "verification-token-not-for-checking"  # noqa: S105


def slash_command(
    command: str,
    text: str,
    *,
    user: str,
    channel: str,
    trigger_id: str,
    response_url: str,
    channel_name: str = "general",
    user_name: str | None = None,
) -> dict[str, str]:
    """The form fields of `user` typing `command text` in `channel`."""
    return {
        "token": VERIFICATION_TOKEN,
        "team_id": TEAM_ID,
        "team_domain": TEAM_DOMAIN,
        "channel_id": channel,
        "channel_name": "directmessage" if channel.startswith("D") else channel_name,
        "user_id": user,
        "user_name": user_name or user.lower(),
        "command": command,
        "text": text,
        "api_app_id": APP_ID,
        "is_enterprise_install": "false",
        "response_url": response_url,
        "trigger_id": trigger_id,
    }


def message_shortcut(
    message: Mapping[str, Any],
    *,
    user: str,
    channel: str,
    trigger_id: str,
    response_url: str,
    callback_id: str = "schedule_copy",
    action_ts: str | None = None,
) -> dict[str, Any]:
    """The `message_action` payload of `user` choosing the shortcut `callback_id` on
    `message` (a message object as history gives it: type, user, ts, text, blocks...)."""
    ts = str(message.get("ts") or "")
    return {
        "type": "message_action",
        "token": VERIFICATION_TOKEN,
        "action_ts": action_ts or ts,
        "team": {"id": TEAM_ID, "domain": TEAM_DOMAIN},
        "user": _user(user),
        "channel": {"id": channel, "name": "directmessage" if channel[:1] == "D" else channel},
        "is_enterprise_install": False,
        "enterprise": None,
        "callback_id": callback_id,
        "trigger_id": trigger_id,
        "response_url": response_url,
        "message_ts": ts,
        "message": dict(message),
    }


def view_submission(
    view: Mapping[str, Any],
    values: Mapping[str, Any],
    *,
    user: str,
    trigger_id: str,
    view_id: str = "V0001",
) -> dict[str, Any]:
    """The `view_submission` payload of `user` submitting `view` (the view object the app
    opened, as passed to views.open) with `values`: action id -> what the person chose
    (see `state_values`). Slack echoes the view back with its id, hash and state."""
    submitted = {
        "id": view_id,
        "team_id": TEAM_ID,
        "type": view.get("type", "modal"),
        "blocks": list(view.get("blocks") or []),
        "private_metadata": view.get("private_metadata", ""),
        "callback_id": view.get("callback_id", ""),
        "state": {"values": state_values(view, values)},
        "hash": f"{view_id}.hash",
        "title": view.get("title"),
        "clear_on_close": bool(view.get("clear_on_close", False)),
        "notify_on_close": bool(view.get("notify_on_close", False)),
        "close": view.get("close"),
        "submit": view.get("submit"),
        "previous_view_id": None,
        "root_view_id": view_id,
        "app_id": APP_ID,
        "external_id": view.get("external_id", ""),
        "app_installed_team_id": TEAM_ID,
        "bot_id": BOT_ID,
    }
    return {
        "type": "view_submission",
        "team": {"id": TEAM_ID, "domain": TEAM_DOMAIN},
        "user": _user(user),
        "api_app_id": APP_ID,
        "token": VERIFICATION_TOKEN,
        "trigger_id": trigger_id,
        "view": submitted,
        "response_urls": [],
        "is_enterprise_install": False,
        "enterprise": None,
    }


def event_callback(event: Mapping[str, Any], *, event_id: str, event_time: int) -> dict[str, Any]:
    """The Events API envelope Slack posts for `event` (its inner `type`, `user`...)."""
    return {
        "token": VERIFICATION_TOKEN,
        "team_id": TEAM_ID,
        "api_app_id": APP_ID,
        "event": dict(event),
        "type": "event_callback",
        "event_id": event_id,
        "event_time": event_time,
        "authorizations": [
            {
                "enterprise_id": None,
                "team_id": TEAM_ID,
                "user_id": BOT_USER_ID,
                "is_bot": True,
                "is_enterprise_install": False,
            }
        ],
        "is_ext_shared_channel": False,
        "event_context": f"4-{event_id}",
    }


def url_verification(challenge: str) -> dict[str, Any]:
    """What Slack sends when an Events API Request URL is saved in the app's settings."""
    return {"token": VERIFICATION_TOKEN, "challenge": challenge, "type": "url_verification"}


def app_home_opened(user: str, event_ts: str, *, tab: str = "home") -> dict[str, Any]:
    """The `app_home_opened` event of `user` opening the app's Home tab (no `view` when the
    app has never published one)."""
    return {
        "type": "app_home_opened",
        "user": user,
        "channel": dm_id(user),
        "tab": tab,
        "event_ts": event_ts,
    }


def app_uninstalled(event_ts: str) -> dict[str, Any]:
    return {"type": "app_uninstalled", "event_ts": event_ts}


def tokens_revoked(event_ts: str, *, bot: list[str] | None = None) -> dict[str, Any]:
    """`tokens_revoked` for the bot tokens of `bot` user ids (default: ours)."""
    return {
        "type": "tokens_revoked",
        "tokens": {"oauth": [], "bot": [BOT_USER_ID] if bot is None else bot},
        "event_ts": event_ts,
    }


# -- bodies ----------------------------------------------------------------------------------


def command_body(fields: Mapping[str, str]) -> bytes:
    """A slash command's body: its fields, form-encoded."""
    return urllib.parse.urlencode(dict(fields)).encode()


def payload_body(payload: Mapping[str, Any]) -> bytes:
    """An interactivity payload's body: `payload=<json>`, form-encoded."""
    return form_body(dict(payload))


def event_body(envelope: Mapping[str, Any]) -> bytes:
    """An Events API body: the envelope as JSON."""
    return json.dumps(dict(envelope)).encode()


FORM = "application/x-www-form-urlencoded"
JSON = "application/json"


def content_type(body: bytes) -> str:
    return JSON if body.lstrip().startswith(b"{") else FORM


def retry_headers(retry_num: int | None, retry_reason: str = "http_timeout") -> dict[str, str]:
    """The headers Slack adds when it retries an event (`retry_num` 1 to 3; None: none)."""
    if retry_num is None:
        return {}
    return {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": retry_reason}


# -- view state ------------------------------------------------------------------------------

# Element type -> the key its chosen value has in `view.state.values` (and the key holding
# its initial value in the view), per Slack's view_submission samples.
_STATE_KEYS: dict[str, tuple[str, str]] = {
    "plain_text_input": ("value", "initial_value"),
    "email_text_input": ("value", "initial_value"),
    "url_text_input": ("value", "initial_value"),
    "number_input": ("value", "initial_value"),
    "rich_text_input": ("rich_text_value", "initial_value"),
    "static_select": ("selected_option", "initial_option"),
    "external_select": ("selected_option", "initial_option"),
    "radio_buttons": ("selected_option", "initial_option"),
    "multi_static_select": ("selected_options", "initial_options"),
    "checkboxes": ("selected_options", "initial_options"),
    "datepicker": ("selected_date", "initial_date"),
    "timepicker": ("selected_time", "initial_time"),
    "datetimepicker": ("selected_date_time", "initial_date_time"),
    "users_select": ("selected_user", "initial_user"),
    "multi_users_select": ("selected_users", "initial_users"),
    "conversations_select": ("selected_conversation", "initial_conversation"),
    "multi_conversations_select": ("selected_conversations", "initial_conversations"),
    "channels_select": ("selected_channel", "initial_channel"),
}
_EMPTY_LIST = {"selected_options", "selected_users", "selected_conversations"}


def state_values(view: Mapping[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """`view.state.values` as Slack builds it: block id -> action id -> {type, value key},
    for every stateful element of the view. An element named in `values` (by action id)
    holds what is given there: a string (a text, an option's value, "2026-12-04", "09:30",
    a user or conversation id), a list of those (multi-selects, checkboxes), an int (a
    datetimepicker's epoch), or, for rich_text_input, a string (one plain section) or a rich
    text block. Elements not named hold their initial value, or null (Slack's shape for an
    untouched optional input). ValueError when `values` names an action the view lacks or an
    option none of its element's options has."""
    state: dict[str, Any] = {}
    unused = set(values)
    for block_id, action_id, element in _elements(view):
        keys = _STATE_KEYS[element["type"]]
        if action_id in values:
            unused.discard(action_id)
            chosen = _chosen(element, keys[0], values[action_id])
        else:
            chosen = _initial(element, keys)
        state.setdefault(block_id, {})[action_id] = {"type": element["type"], keys[0]: chosen}
    if unused:
        raise ValueError(f"the view has no input with action_id {', '.join(sorted(unused))}")
    return state


def _elements(view: Mapping[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(block id, action id, element) of each stateful element; Slack makes up ids the view
    leaves out, here deterministic ones."""
    for index, block in enumerate(view.get("blocks") or []):
        block_id = str(block.get("block_id") or f"block-{index}")
        candidates = list(block.get("elements") or []) if block.get("type") == "actions" else []
        for key in ("element", "accessory"):
            if isinstance(block.get(key), dict):
                candidates.append(block[key])
        for position, element in enumerate(candidates):
            if element.get("type") in _STATE_KEYS:
                action_id = str(element.get("action_id") or f"action-{index}-{position}")
                yield block_id, action_id, element


def _chosen(element: Mapping[str, Any], key: str, given: Any) -> Any:
    if key == "selected_option":
        return None if given is None else _option(element, str(given))
    if key == "selected_options":
        return [_option(element, str(value)) for value in given or []]
    if key == "rich_text_value" and isinstance(given, str):
        return rich_text(given)
    return given


def _initial(element: Mapping[str, Any], keys: tuple[str, str]) -> Any:
    initial = element.get(keys[1])
    if initial is None and keys[0] in _EMPTY_LIST:
        return []
    if keys[0] == "value" and isinstance(initial, int | float):
        return str(initial)  # number_input's state value is text
    return initial


def _option(element: Mapping[str, Any], value: str) -> dict[str, Any]:
    options = list(element.get("options") or [])
    for group in element.get("option_groups") or []:
        options.extend(group.get("options") or [])
    if element.get("type") == "external_select":
        return {"text": {"type": "plain_text", "text": value}, "value": value}
    for option in options:
        if option.get("value") == value:
            return dict(option)
    raise ValueError(f"{element.get('action_id')} has no option {value!r}")


def rich_text(text: str) -> dict[str, Any]:
    """A rich_text_input's value for plain `text`: one section holding one text element."""
    return {
        "type": "rich_text",
        "elements": [{"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}],
    }


def _user(user: str) -> dict[str, Any]:
    return {"id": user, "username": user.lower(), "name": user.lower(), "team_id": TEAM_ID}
