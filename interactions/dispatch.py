"""Which code acts on each kind of signed Slack request (interactions.inbound): one row per
kind. A kind without a row is acknowledged and logged, never an error: Slack only needs the
acknowledgement, and an app's settings may send more than this product acts on. (An
Events API `url_verification` is answered before the table: interactions.target.)"""

from __future__ import annotations

from collections.abc import Callable

import flask

from core import logs
from core.runtime import Runtime
from interactions.acknowledge import ok
from interactions.commands import take_command
from interactions.events_api import take_event
from interactions.home_actions import take_view_action
from interactions.inbound import (
    COMMAND,
    EVENT,
    MESSAGE_ACTIONS,
    MESSAGE_SHORTCUT,
    VIEW_ACTIONS,
    VIEW_SUBMISSION,
    Inbound,
)
from interactions.message_click import take_click
from interactions.schedule_modal import take_shortcut, take_submission

Handler = Callable[[Runtime, Inbound], flask.Response]


HANDLERS: dict[str, Handler] = {
    MESSAGE_ACTIONS: take_click,
    VIEW_ACTIONS: take_view_action,
    EVENT: take_event,
    COMMAND: take_command,
    VIEW_SUBMISSION: take_submission,
    MESSAGE_SHORTCUT: take_shortcut,
}


def take_inbound(rt: Runtime, inbound: Inbound | None) -> flask.Response:
    if inbound is None:
        logs.warning("interaction ignored", reason="malformed")
        return ok()
    handler = HANDLERS.get(inbound.kind)
    if handler is None:
        logs.info("interaction ignored", reason="not handled", kind=inbound.kind)
        return ok()
    return handler(rt, inbound)
