"""The ephemeral reply to a click that changed nothing ("already answered").

Slack ignores the HTTP body of a `block_actions` answer; a reply only the clicker sees is
posted to the payload's `response_url` with `response_type: ephemeral` and
`replace_original: false`. The URL is only followed to Slack's own hooks host (or the
configured SLACK_API_URL's origin: the local stand-in), never anywhere a payload names."""

from __future__ import annotations

import urllib.parse

from slack_sdk.webhook import WebhookClient

from core import logs
from core.runtime import Runtime

SLACK_HOOKS = ("https", "hooks.slack.com")
# Bounded well under Slack's 3 s: the click is answered after the reply is taken.
_TIMEOUT_SECONDS = 1


def reply_ephemeral(rt: Runtime, response_url: str | None, text: str) -> bool:
    """Whether the reply was taken."""
    if response_url is None or not _allowed(rt, response_url):
        return False
    try:
        answer = WebhookClient(response_url, timeout=_TIMEOUT_SECONDS).send(
            text=text, response_type="ephemeral", replace_original=False
        )
    except Exception as exc:
        logs.warning("ephemeral reply failed", error_message=repr(exc))
        return False
    return answer.status_code == 200


def _allowed(rt: Runtime, url: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    ours = urllib.parse.urlsplit(rt.settings.slack_api_url)
    return (parts.scheme, parts.netloc) in (SLACK_HOOKS, (ours.scheme, ours.netloc))
