"""The Slack Web API calls a slash command or a modal makes while its request waits:
`views.open` (a trigger_id lives 3 s), `users.info` (the person's time zone) and
`chat.postEphemeral`. Each is bounded well under Slack's 3 s and made once: a failure is
Slack's error code (or the exception's name) for the caller to tell the person or log,
never retried, since a trigger_id opens one view only."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.web import SlackResponse

from core import logs
from core.runtime import Runtime
from core.settings import Settings
from core.slack import web_client

_TIMEOUT_SECONDS = 1


class SlackRefused(Exception):
    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


@functools.lru_cache(maxsize=4)
def _client(settings: Settings) -> WebClient:
    """The one client (and TLS context) of the process for these calls."""
    # Only a local stand-in is ever reached without a token (settings enforce it).
    token = settings.slack_bot_token or "xoxb-local-stand-in"
    return web_client(token, settings.slack_api_url, _TIMEOUT_SECONDS)


def call(rt: Runtime, method: Callable[[WebClient], SlackResponse]) -> dict[str, Any]:
    """Slack's answer to `method` (a WebClient method called), SlackRefused with its error
    code otherwise."""
    try:
        answer = method(_client(rt.settings))
    except SlackApiError as exc:
        code = exc.response.get("error") if exc.response is not None else None
        raise SlackRefused(str(code or "slack_error")) from exc
    except Exception as exc:
        raise SlackRefused(type(exc).__name__) from exc
    return dict(answer.data) if isinstance(answer.data, dict) else {}


def timezone_of(rt: Runtime, user: str) -> str | None:
    """The person's zone as Slack knows it (`users.info` `tz`); None when not known."""
    try:
        answer = call(rt, lambda slack: slack.users_info(user=user))
    except SlackRefused as exc:
        logs.warning("users.info failed", user=user, error_code=exc.code)
        return None
    tz = (answer.get("user") or {}).get("tz")
    return tz if isinstance(tz, str) and tz else None


def post_ephemeral(rt: Runtime, conversation: str, user: str, text: str) -> bool:
    """Whether Slack took the message only `user` sees in `conversation`."""
    try:
        call(rt, lambda slack: slack.chat_postEphemeral(channel=conversation, user=user, text=text))
    except SlackRefused as exc:
        logs.warning(
            "ephemeral message failed", channel=conversation, user=user, error_code=exc.code
        )
        return False
    return True
