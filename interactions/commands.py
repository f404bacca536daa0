"""Slash commands (the `COMMAND` kind): one row per command name in `COMMANDS`.

`/schedule` opens the scheduling modal for the conversation it was typed in;
`/schedule list` answers, to the person only, their upcoming messages; `/schedule help` (or
any other text) answers how to use it. A slash command's HTTP answer is shown only to the
person who typed it (`response_type: ephemeral`)."""

from __future__ import annotations

from collections.abc import Callable

import flask

from core import logs
from core.runtime import Runtime
from interactions.acknowledge import json_answer, ok
from interactions.inbound import Inbound
from interactions.schedule_list import upcoming_text
from interactions.schedule_modal import open_modal

Handler = Callable[[Runtime, Inbound], flask.Response]

USAGE = (
    "*/schedule* opens a form to schedule a message to this conversation (once, or"
    " repeating).\n*/schedule list* shows the messages you scheduled that are still to go"
    " out.\n*/schedule help* shows this."
)


def schedule(rt: Runtime, inbound: Inbound) -> flask.Response:
    fields = inbound.fields
    words = str(fields.get("text") or "").strip().lower()
    user, channel = fields.get("user_id"), fields.get("channel_id")
    if not user or not channel:
        logs.warning("command ignored", reason="malformed", command="/schedule")
        return ok()
    if words == "":
        open_modal(
            rt,
            trigger_id=str(fields.get("trigger_id") or ""),
            user=user,
            conversation=channel,
            response_url=fields.get("response_url"),
        )
        return ok()
    if words == "list":
        return _ephemeral(upcoming_text(rt, user))
    return _ephemeral(USAGE)


COMMANDS: dict[str, Handler] = {"/schedule": schedule}


def take_command(rt: Runtime, inbound: Inbound) -> flask.Response:
    name = inbound.fields.get("command")
    handler = COMMANDS.get(str(name))
    if handler is None:
        logs.info("command ignored", reason="not handled", command=name)
        return ok()
    return handler(rt, inbound)


def _ephemeral(text: str) -> flask.Response:
    return json_answer({"response_type": "ephemeral", "text": text})
