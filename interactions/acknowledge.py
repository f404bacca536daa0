"""The answers the `interactions` target gives Slack: an empty 200 (acknowledged), a JSON
200 (a challenge, a view submission's `response_action`), a JSON 401 (not Slack's)."""

from __future__ import annotations

import json
from typing import Any

import flask

from interactions.inbound import Inbound


def ok() -> flask.Response:
    return flask.Response(b"", status=200)


def json_answer(data: dict[str, Any]) -> flask.Response:
    return flask.Response(json.dumps(data), status=200, mimetype="application/json")


def unauthorized(message: str) -> flask.Response:
    body = {"error": "unauthorized", "message": message, "details": []}
    return flask.Response(json.dumps(body), status=401, mimetype="application/json")


def answer_challenge(inbound: Inbound) -> flask.Response:
    """Events API `url_verification`: Slack checks the Request URL by its `challenge`."""
    challenge = inbound.fields.get("challenge")
    return json_answer({"challenge": challenge if isinstance(challenge, str) else ""})
