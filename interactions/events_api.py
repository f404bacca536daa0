"""Slack's Events API: each signed `event_callback` acted on once, by its inner event's type.

Slack delivers an event again when it was not acknowledged in 3 s (with `X-Slack-Retry-Num`),
and may deliver one twice besides: `take_event` first creates `slack_events/{event_id}`
(core.documents.slack_events) and acts only when that create is the first; a retry or a
duplicate finds it and is acknowledged with nothing done. An event is therefore acted on at
most once: a handler that fails after the create is logged, not retried. `EVENTS` says which
code acts on each event type; a type without a row is acknowledged and logged. Handlers run
inside the request's 2 s (interactions.in_time): they do a few writes, never a Slack call."""

from __future__ import annotations

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
from interactions.inbound import Inbound

# Slack retries an unacknowledged event three times within about an hour; a day is ample.
KEEP_EVENT = timedelta(days=1)

EventHandler = Callable[[Runtime, dict[str, Any]], None]

# The event types acted on, each handed the whole `event_callback` body (its `event`,
# `event_id`, `team_id`, `authorizations`, ...).
EVENTS: dict[str, EventHandler] = {}


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
    handler(rt, body)
    return ok()


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
