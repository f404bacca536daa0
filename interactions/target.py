"""The `interactions` HTTP target: Slack's clicks on our buttons.

Answers (CONTRACT.md): 401 when the request is not Slack's fresh first delivery of it
(forged, unsigned, stale, replayed, or no SLACK_SIGNING_SECRET configured); 200 with an
empty body for everything signed, recorded or not (a malformed payload, an unknown action,
a delivery not ours), since Slack only needs the acknowledgement. Nothing here raises: an
unexpected failure is logged and acknowledged, and never recorded half-way (the answer is
one create)."""

from __future__ import annotations

import json

import flask

from core import logs
from core.errors import SettingsError
from core.runtime import Runtime, runtime_for
from core.settings import Settings
from interactions.click import parse_click
from interactions.record import Answer, record_click
from interactions.reply import reply_ephemeral
from interactions.show import show_answers
from interactions.signature import refusal


def handle_interactions(request: flask.Request) -> flask.Response:
    try:
        rt = runtime_for(Settings.from_env())
    except SettingsError as exc:
        logs.error("settings are invalid", error_code="settings", error_message=str(exc))
        return _unauthorized("the server cannot verify requests")
    try:
        return take(rt, request.get_data(), dict(request.headers))
    except Exception as exc:
        logs.error("interaction failed", error_code=type(exc).__name__, error_message=str(exc))
        return _ok()


def take(rt: Runtime, body: bytes, headers: dict[str, str]) -> flask.Response:
    reason = refusal(rt, body, headers)
    if reason is not None:
        logs.warning("interaction refused", reason=reason)
        return _unauthorized(f"not a valid Slack request ({reason})")
    click = parse_click(body)
    if click is None:
        logs.warning("interaction ignored", reason="malformed")
        return _ok()
    recorded = record_click(rt, click)
    fields = {
        "delivery_id": click.delivery_id,
        "user": click.user,
        "action_id": click.action_id,
        "outcome": recorded.answer.value,
    }
    if recorded.answer is Answer.RECORDED:
        logs.info("answer recorded", **fields)
        show_answers(rt, click.delivery_id)
    elif recorded.answer is Answer.ALREADY_ANSWERED:
        logs.info("answer not taken: already answered", **fields)
        label = recorded.action.label if recorded.action is not None else "an answer"
        who = "You" if recorded.user == click.user else f"<@{recorded.user}>"
        reply_ephemeral(rt, click.response_url, f"{who} already answered: {label}")
    elif recorded.answer is Answer.REFUSED:
        logs.info("action refused", **fields, reason=recorded.reason)
        reply_ephemeral(rt, click.response_url, recorded.reason or "This action is not yours.")
    else:
        logs.warning("interaction ignored", **fields)
    return _ok()


def _ok() -> flask.Response:
    return flask.Response(b"", status=200)


def _unauthorized(message: str) -> flask.Response:
    body = {"error": "unauthorized", "message": message, "details": []}
    return flask.Response(json.dumps(body), status=401, mimetype="application/json")
