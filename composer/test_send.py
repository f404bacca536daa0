"""`POST /messages/{id}/test` `{"user": "U…"}`: the message as it would post, sent as a direct
message to that person and marked as a test.

It is the same render as a send (formatting.render: mentions, escaping, broadcast policy),
with a context line first, "Test — not a scheduled send", that also names the message's
buttons: they are left out of a test, since a click must answer a delivery and a test has
none. Nothing else of a send happens: no ledger entry, no counters, no gates, no lease; the
message document is only read. A Slack refusal is answered at once: a person Slack will not
open a DM with is a 422 naming `user`; a refusal for now (rate limited, Slack down) a 503
with Slack's Retry-After; any other refusal a 502 naming Slack's code.

A Microsoft Teams message is refused (422 naming `user`): a test is a Slack DM, and a Teams
person's personal chat is only known once they have written to the bot."""

from __future__ import annotations

from typing import Any

from composer.versions import read
from core import logs
from core.actions import Action
from core.errors import Conflict, DocumentError, HttpError, Unavailable, ValidationFailed
from core.models import USER_ID, Message
from core.platform import SLACK, Outcome, PostResult
from core.runtime import Runtime
from core.store import MESSAGES
from formatting.slack_text import to_slack

MARK = "Test — not a scheduled send"
# Slack's answers to conversations.open that are about the person asked for.
_NOT_THIS_PERSON = frozenset(
    {"user_not_found", "user_disabled", "cannot_dm_bot", "user_not_visible", "users_not_found"}
)


class SlackRefused(HttpError):
    """Slack did not take the test (rate limited, down, or refused the post)."""

    status, code = 502, "slack_refused"


def send_test(rt: Runtime, message_id: str, user: str) -> dict[str, Any]:
    if not USER_ID.match(user):
        raise ValidationFailed(
            "user must be a Slack user id", [{"field": "user", "message": "not a Slack user id"}]
        )
    message = _message(rt, message_id)
    try:
        rendered = to_slack(message.text, allow_broadcast=message.allow_broadcast)
    except DocumentError as exc:
        raise Conflict(f"the message cannot be rendered ({exc.code}): {exc.message}") from None
    dm = rt.slack.open_dm(user)
    if isinstance(dm, PostResult):
        raise _refused(dm, user, "open a direct message with")
    blocks = [_mark(message.actions), *(rendered.blocks or [_section(rendered.text)])]
    post = rt.slack.post(dm, f"{MARK}: {rendered.text}", f"test:{message_id}", blocks=blocks)
    if post.outcome is not Outcome.DELIVERED:
        raise _refused(post, user, "post the test to")
    logs.info("test sent", message_id=message_id, user=user, channel=dm, slack_ts=post.ts)
    return {"channel": dm, "ts": post.ts}


def _message(rt: Runtime, message_id: str) -> Message:
    data = read(rt.db.collection(MESSAGES).document(message_id), "message").to_dict() or {}
    try:
        message = Message.from_document(message_id, data)
    except DocumentError as exc:
        raise Conflict(f"the stored message cannot be sent ({exc.code}): {exc.message}") from None
    if message.platform != SLACK:
        raise ValidationFailed(
            "a test is a Slack direct message; this message posts to Microsoft Teams",
            [{"field": "user", "message": "tests of Microsoft Teams messages are not sent"}],
        )
    return message


def _refused(result: PostResult, user: str, what: str) -> HttpError:
    """The error a Slack refusal answers: 422 naming `user` when it is about the person."""
    code = result.code or result.outcome.value
    detail = f"Slack would not {what} {user}: {code}"
    if code in _NOT_THIS_PERSON:
        return ValidationFailed(detail, [{"field": "user", "message": code}])
    if result.outcome is Outcome.RETRY_LATER:  # rate limited, Slack down: nothing was posted
        return Unavailable(f"{detail}; try again", result.retry_after)
    return SlackRefused(detail, [{"field": "slack", "message": code}])


def _mark(actions: tuple[Action, ...]) -> dict[str, Any]:
    labels = " · ".join(action.label for action in actions)
    text = f"{MARK} (buttons left out: {labels})" if labels else MARK
    return {"type": "context", "elements": [{"type": "plain_text", "text": text}]}


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}
