"""The `interactions` HTTP target: Slack's clicks on our buttons.

Answers (CONTRACT.md): 401 when the request is not Slack's fresh first delivery of it
(forged, unsigned, stale, replayed, or no SLACK_SIGNING_SECRET configured); 200 with an
empty body for everything signed, recorded or not (a malformed payload, an unknown action,
a delivery not ours), since Slack only needs the acknowledgement. Nothing here raises: an
unexpected failure is logged and acknowledged, and never recorded half-way (the answer is
one create).

Slack shows the person an error when a request is not answered within 3 s. Its signature is
checked first (no I/O: a request not signed by Slack is refused at once, however busy the
workers are); the rest of its work (the replay check, record, hand-off, ephemeral reply)
runs on a worker thread that the request waits for at most 2 s (interactions.in_time); the post
is updated off the request path (interactions.handoff). Work still running then (Firestore
slow) is answered 200 anyway and logged; it goes on, and an answer it records is shown by
the next pass."""

from __future__ import annotations

import json

import flask

from core import logs
from core.errors import SettingsError
from core.runtime import Runtime, runtime_for
from core.settings import Settings
from interactions.click import parse_click
from interactions.handoff import hand_off
from interactions.in_time import in_time
from interactions.record import Answer, record_click
from interactions.reply import reply_ephemeral
from interactions.signature import refusal, replayed


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
    """The request's answer, within ANSWER_WITHIN_SECONDS whatever its work waits on; one
    that is not signed by Slack is refused before it waits on anything."""
    reason = refusal(rt, body, headers)
    if reason is not None:
        return _refused(reason)
    # The click is parsed for the log only: whether it is a replay is not known yet.
    return in_time(lambda: _decide(rt, body, headers), _ok(), lambda: parse_click(body))


def _decide(rt: Runtime, body: bytes, headers: dict[str, str]) -> flask.Response:
    reason = replayed(rt, headers)
    if reason is not None:
        return _refused(reason)
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
        hand_off(rt, click.delivery_id)
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


def _refused(reason: str) -> flask.Response:
    logs.warning("interaction refused", reason=reason)
    return _unauthorized(f"not a valid Slack request ({reason})")


def _unauthorized(message: str) -> flask.Response:
    body = {"error": "unauthorized", "message": message, "details": []}
    return flask.Response(json.dumps(body), status=401, mimetype="application/json")
