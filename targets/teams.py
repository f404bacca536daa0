"""The `teams` HTTP target: Bot Framework activities from Microsoft Teams.

Every request is authenticated first by its Bot Framework JWT (core.teams_auth): anything
else is a JSON 401 and stores nothing. The body is read before that only for the
`serviceUrl` the token's `serviceurl` claim must equal; once authenticated, a body that is
not an activity is a JSON 400 naming the field.

- An install of our bot (`installationUpdate` `add`, or `conversationUpdate` with the bot
  in `membersAdded`) stores `teams_conversations/{conversation id}` as installed; a removal
  marks it `removed` (core.documents.teams_conversations). Answer: 200 `{}`.
- `invoke` activities (`adaptiveCard/action`: a click on a card's Action.Execute) are
  answered within ANSWER_WITHIN_SECONDS by interactions.teams_action: 200 with the invoke
  response (a message to the clicker); the card is updated off the request path.
- Any other activity (a message to the bot, a reaction, ...): 200 `{}`, nothing stored.
"""

from __future__ import annotations

import json
from typing import Any

import flask

from core import logs
from core.documents.teams_conversations import record_install, record_removal
from core.errors import HttpError, MethodNotAllowed, SettingsError, Unauthorized
from core.http import internal_error
from core.runtime import Runtime, runtime_for
from core.settings import Settings
from core.teams_activity import INVOKE, Activity, activity, claimed_service_url, load, membership
from core.teams_auth import inbound_validator
from interactions.teams_action import answer_action

Answer = tuple[dict[str, Any], int]


def handle_teams(request: flask.Request) -> flask.Response:
    try:
        settings = Settings.from_env()
    except SettingsError as exc:
        logs.error("settings are invalid", error_code="settings", error_message=str(exc))
        return _error(Unauthorized("the server cannot verify requests"))
    try:
        body, status = take(runtime_for(settings), request)
    except HttpError as exc:
        if isinstance(exc, Unauthorized):
            logs.warning("teams activity refused", reason=exc.message)
        return _error(exc)
    except Exception as exc:
        return internal_error(exc)
    return _json(body, status)


def take(rt: Runtime, request: flask.Request) -> Answer:
    """The answer to one request: authenticated, then parsed, then handled."""
    if request.method != "POST":
        authenticate(rt.settings, request, None)
        raise MethodNotAllowed(f"the teams target takes POST, not {request.method}", ["POST"])
    raw = request.get_data(cache=True)
    body = load(raw)
    authenticate(rt.settings, request, claimed_service_url(body))
    received = activity(raw, body)
    if received.type == INVOKE:
        return handle_invoke(rt, received)
    return handle_membership(rt, received)


def authenticate(settings: Settings, request: flask.Request, service_url: str | None) -> None:
    """`Unauthorized` unless the request carries Bot Framework's token for our app (and
    for `service_url`, when the body names one: a body naming none is refused after)."""
    if not settings.teams_app_id:
        raise Unauthorized("the server cannot verify requests: TEAMS_APP_ID is not set")
    validator = inbound_validator(settings.teams_app_id, settings.teams_openid_metadata_url)
    validator.claims(request.headers.get("Authorization"), service_url)


def handle_membership(rt: Runtime, received: Activity) -> Answer:
    """An install or removal of our bot is recorded; any other activity is acknowledged."""
    change = membership(received)
    if change is None:
        logs.info("teams activity ignored", activity_type=received.type)
        return {}, 200
    record = record_install if change.added else record_removal
    taken = record(rt.db, change.conversation_id, change.place, change.at, rt.clock.now())
    logs.info(
        "teams conversation installed" if change.added else "teams conversation removed",
        conversation_id=change.conversation_id,
        conversation_type=change.place.conversation_type.value,
        tenant_id=change.place.tenant_id,
        outcome="recorded" if taken else "older_than_stored",
    )
    return {}, 200


def handle_invoke(rt: Runtime, received: Activity) -> Answer:
    """An Adaptive Card action (or any other invoke): its invoke response, in time."""
    return answer_action(rt, received.body), 200


def _error(exc: HttpError) -> flask.Response:
    answer = _json(exc.body(), exc.status)
    answer.headers.update(exc.headers)
    return answer


def _json(body: dict[str, Any], status: int) -> flask.Response:
    return flask.Response(json.dumps(body), status=status, mimetype="application/json")
