"""Slack's Events API: each signed `event_callback` acted on once, by its inner event's type.

Slack delivers an event again when it was not acknowledged in 3 s (with `X-Slack-Retry-Num`),
and may deliver one twice besides: `take_event` first creates `slack_events/{event_id}`
(core.documents.slack_events) and acts only when that create is the first; a retry or a
duplicate finds it and is acknowledged with nothing done. A handler that raises has the
record removed and is answered 500, so that Slack's retry acts on the event again (the
handlers are idempotent: they store a state). `EVENTS` says which code acts on each event
type; a type without a row is acknowledged and logged. Handlers run inside the request's
2 s (interactions.in_time): a few writes, and for `app_home_opened` one `views.publish`
(a publish Slack does not take is logged; the next opening of the tab publishes again)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import flask
from google.api_core.exceptions import AlreadyExists

from core import logs
from core.documents.slack_events import SlackEventField
from core.runtime import Runtime
from core.store import SLACK_EVENTS, is_document_id
from interactions.acknowledge import ok
from interactions.home import home_opened
from interactions.inbound import Inbound
from interactions.uninstall import app_uninstalled, tokens_revoked

# Slack retries an unacknowledged event three times within about an hour; a day is ample.
KEEP_EVENT = timedelta(days=1)

EventHandler = Callable[[Runtime, dict[str, Any]], None]

# The event types acted on, each handed the whole `event_callback` body (its `event`,
# `event_id`, `team_id`, `authorizations`, ...).
EVENTS: dict[str, EventHandler] = {
    "app_uninstalled": app_uninstalled,
    "tokens_revoked": tokens_revoked,
    "app_home_opened": home_opened,
}


def take_event(rt: Runtime, inbound: Inbound) -> flask.Response:
    """The EVENT row of interactions.dispatch: the event acted on if it is its first
    delivery; always acknowledged."""
    body = inbound.fields
    event = body.get("event")
    event_id = body.get("event_id")
    event_type = event.get("type") if isinstance(event, dict) else None
    if not isinstance(event_id, str) or not is_document_id(event_id):
        logs.warning("event ignored", reason="no event_id", event_type=event_type)
        return ok()
    handler = EVENTS.get(event_type) if isinstance(event_type, str) else None
    if handler is None:
        logs.info("event ignored", reason="not handled", event_id=event_id, event_type=event_type)
        return ok()
    if not first_delivery(rt, event_id, str(event_type), body.get("team_id")):
        logs.info("event ignored", reason="duplicate", event_id=event_id, event_type=event_type)
        return ok()
    try:
        handler(rt, body)
    except Exception as exc:
        return _failed(rt, event_id, str(event_type), exc)
    return ok()


def _failed(rt: Runtime, event_id: str, event_type: str, exc: Exception) -> flask.Response:
    """Slack delivers the event again on a 5xx; its record goes first, so that delivery is
    acted on (a record that cannot be removed leaves the event done with this line; a
    request already answered by in_time's bound gets no redelivery)."""
    logs.error(
        "event failed; its record is removed so that Slack's redelivery acts on it",
        event_id=event_id,
        event_type=event_type,
        error_code=type(exc).__name__,
        error_message=str(exc),
    )
    rt.db.collection(SLACK_EVENTS).document(event_id).delete()
    body = {"error": "internal", "message": "the event could not be taken", "details": []}
    return flask.Response(json.dumps(body), status=500, mimetype="application/json")


def first_delivery(rt: Runtime, event_id: str, event_type: str, team_id: Any) -> bool:
    """Whether this is the first time `event_id` is taken: True for the one create that
    succeeds, on any instance."""
    now = rt.clock.now()
    record = {
        SlackEventField.TYPE.value: event_type,
        SlackEventField.TEAM_ID.value: team_id if isinstance(team_id, str) else None,
        SlackEventField.RECEIVED_AT.value: now,
        SlackEventField.EXPIRES_AT.value: now + KEEP_EVENT,
    }
    ref = rt.db.collection(SLACK_EVENTS).document(event_id)
    try:
        ref.create(record)  # pragma: SYNCPOINT event taken
    except AlreadyExists:
        return False
    return True
