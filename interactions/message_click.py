"""A click on one of our posts' buttons (`block_actions` on a message): recorded, the first
answer winning (interactions.record), the post then updated off the request path
(interactions.handoff); a person whose click is not taken is told why, privately."""

from __future__ import annotations

import flask

from core import logs
from core.runtime import Runtime
from interactions.acknowledge import ok
from interactions.click import click_from
from interactions.handoff import hand_off
from interactions.inbound import Inbound
from interactions.record import Answer, record_click
from interactions.reply import reply_ephemeral


def take_click(rt: Runtime, inbound: Inbound) -> flask.Response:
    click = click_from(inbound.fields)
    if click is None:
        logs.warning("interaction ignored", reason="malformed")
        return ok()
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
    return ok()
