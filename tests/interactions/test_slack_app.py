"""docs/slack-app.md's app manifest: it parses as the YAML Slack's app settings take, wires
`/schedule`, the "Schedule a copy" shortcut, the Home tab, the events and interactivity to
one Request URL, and grants a scope for every Slack Web API method the code calls (a new
method fails here until its scopes are in METHOD_SCOPES and in the manifest)."""

from __future__ import annotations

import re
from typing import Any

import yaml

from tests.fixtures.runtime import ROOT

# The bot token scopes each method needs (docs.slack.dev/reference/methods/<method>);
# conversations.history's depends on the kind of conversation, and posts go to all kinds.
METHOD_SCOPES: dict[str, set[str]] = {
    "auth.test": set(),
    "chat.postMessage": {"chat:write"},
    "chat.update": {"chat:write"},
    "chat.postEphemeral": {"chat:write"},
    "conversations.open": {"im:write"},
    "conversations.history": {
        "channels:history",
        "groups:history",
        "im:history",
        "mpim:history",
    },
    "conversations.list": {"channels:read", "groups:read"},
    "users.list": {"users:read"},
    "users.info": {"users:read"},
    "users.lookupByEmail": {"users:read", "users:read.email"},
    "views.open": set(),
    "views.push": set(),
    "views.update": set(),
    "views.publish": set(),
}
CODE = ["core", "composer", "processor", "messages", "rotations", "events", "interactions"]
CODE += ["targets", "formatting", "main.py"]
_FAMILIES = "auth|chat|conversations|users|views|team|reactions|bots|usergroups"
_LITERAL = re.compile(rf"[\"']((?:{_FAMILIES})\.[A-Za-z]+)[\"']")
_SDK_CALL = re.compile(rf"\.({_FAMILIES})_([A-Za-z]+)\(")


def manifest() -> dict[str, Any]:
    text = (ROOT / "docs" / "slack-app.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.DOTALL)
    assert len(blocks) == 1, "docs/slack-app.md has one yaml block: the manifest"
    parsed = yaml.safe_load(blocks[0])
    assert isinstance(parsed, dict)
    return parsed


def methods_called() -> set[str]:
    """Slack methods the product's code names: as strings ("chat.postMessage") or as
    slack_sdk WebClient calls (client.users_lookupByEmail(...))."""
    found: set[str] = set()
    for entry in CODE:
        path = ROOT / entry
        for source in [path] if path.is_file() else sorted(path.rglob("*.py")):
            text = source.read_text()
            found.update(_LITERAL.findall(text))
            found.update(f"{family}.{name}" for family, name in _SDK_CALL.findall(text))
    return found


def test_the_manifest_grants_a_scope_for_every_method_the_code_calls() -> None:
    called = methods_called()
    granted = set(manifest()["oauth_config"]["scopes"]["bot"])

    unknown = called - set(METHOD_SCOPES)
    assert not unknown, f"add the scopes of {sorted(unknown)} to METHOD_SCOPES and the manifest"
    needed = set().union(*(METHOD_SCOPES[method] for method in called))
    assert needed <= granted, f"the manifest lacks {sorted(needed - granted)}"
    assert {"chat.postMessage", "conversations.history", "users.lookupByEmail"} <= called


def test_the_manifest_names_the_issues_scopes() -> None:
    granted = set(manifest()["oauth_config"]["scopes"]["bot"])

    assert granted == {
        "commands", "chat:write", "im:write", "users:read", "users:read.email",
        "channels:read", "groups:read", "channels:history", "groups:history",
        "im:history", "mpim:history",
    }  # fmt: skip


def test_the_manifest_wires_every_slack_native_surface_to_one_request_url() -> None:
    app = manifest()
    features, settings = app["features"], app["settings"]

    [command] = features["slash_commands"]
    [shortcut] = features["shortcuts"]
    assert command["command"] == "/schedule"
    assert (shortcut["type"], shortcut["callback_id"]) == ("message", "schedule_copy")
    assert shortcut["name"] == "Schedule a copy"
    assert features["app_home"]["home_tab_enabled"] is True
    assert set(settings["event_subscriptions"]["bot_events"]) == {
        "app_home_opened",
        "app_uninstalled",
        "tokens_revoked",
    }
    assert settings["interactivity"]["is_enabled"] is True
    urls = {
        command["url"],
        settings["event_subscriptions"]["request_url"],
        settings["interactivity"]["request_url"],
    }
    assert urls == {"https://REGION-PROJECT.cloudfunctions.net/interactions"}
    assert settings["socket_mode_enabled"] is False  # Slack posts to the Request URL
