"""Clicks as Slack sends them to an app's interactivity request URL: a `block_actions`
payload, form-encoded as `payload=<json>`, signed with the app's signing secret
(`v0=` HMAC-SHA256 of `v0:{timestamp}:{body}`, slack_sdk's SignatureVerifier's own scheme).
Used by the Slack stand-in's click replay and by the tests."""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

from slack_sdk.signature import SignatureVerifier


def click_payload(
    button: dict[str, Any], user: str, channel: str, ts: str, response_url: str | None = None
) -> dict[str, Any]:
    """The payload of `user` clicking `button` (a posted button element) on message `ts`."""
    return {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "team_id": "T0001"},
        "team": {"id": "T0001"},
        "api_app_id": "A0001",
        "container": {"type": "message", "message_ts": ts, "channel_id": channel},
        "channel": {"id": channel},
        "message": {"ts": ts, "type": "message"},
        "response_url": response_url,
        "trigger_id": "1.2.3",
        "actions": [
            {
                "type": "button",
                "block_id": "actions",
                "action_id": button.get("action_id"),
                "value": button.get("value"),
                "text": button.get("text"),
                "action_ts": ts,
            }
        ],
    }


def form_body(payload: Any) -> bytes:
    return urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()


def signed_headers(secret: str, body: bytes, timestamp: int) -> dict[str, str]:
    signature = SignatureVerifier(secret).generate_signature(timestamp=str(timestamp), body=body)
    return {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": str(timestamp),
        "X-Slack-Signature": str(signature),
    }
