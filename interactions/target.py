"""The `interactions` HTTP target: Slack's signed requests (clicks on our buttons, and the
kinds interactions.dispatch acts on: slash commands, views, the Events API).

Answers (CONTRACT.md): 401 when the request is not Slack's fresh first delivery of it
(forged, unsigned, stale, replayed, or no SLACK_SIGNING_SECRET configured); 200 for
everything signed, acted on or not (a malformed payload, an unknown action, a delivery not
ours), since Slack only needs the acknowledgement: empty, or the JSON the kind asks for (an
Events API challenge). Nothing here raises: an
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

import flask

from core import logs
from core.errors import SettingsError
from core.runtime import Runtime, runtime_for
from core.settings import Settings
from interactions.acknowledge import answer_challenge, ok, unauthorized
from interactions.click import parse_click
from interactions.dispatch import take_inbound
from interactions.in_time import in_time
from interactions.inbound import URL_VERIFICATION, Inbound, classify
from interactions.signature import refusal, replayed


def handle_interactions(request: flask.Request) -> flask.Response:
    try:
        rt = runtime_for(Settings.from_env())
    except SettingsError as exc:
        logs.error("settings are invalid", error_code="settings", error_message=str(exc))
        return unauthorized("the server cannot verify requests")
    try:
        return take(rt, request.get_data(), dict(request.headers))
    except Exception as exc:
        logs.error("interaction failed", error_code=type(exc).__name__, error_message=str(exc))
        return ok()


def take(rt: Runtime, body: bytes, headers: dict[str, str]) -> flask.Response:
    """The request's answer, within ANSWER_WITHIN_SECONDS whatever its work waits on; one
    that is not signed by Slack is refused before it waits on anything."""
    reason = refusal(rt, body, headers)
    if reason is not None:
        return _refused(reason)
    inbound = classify(body)
    if inbound is not None and inbound.kind == URL_VERIFICATION:
        # Nothing to record and no I/O: answered at once, so a slow Firestore (a cold
        # start) never answers Slack's Request URL check without its challenge.
        return answer_challenge(inbound)
    # The click is parsed for the log only: whether it is a replay is not known yet.
    return in_time(lambda: _decide(rt, body, headers, inbound), ok(), lambda: parse_click(body))


def _decide(
    rt: Runtime, body: bytes, headers: dict[str, str], inbound: Inbound | None
) -> flask.Response:
    reason = replayed(rt, headers)
    if reason is not None:
        return _refused(reason)
    return take_inbound(rt, inbound)


def _refused(reason: str) -> flask.Response:
    logs.warning("interaction refused", reason=reason)
    return unauthorized(f"not a valid Slack request ({reason})")
