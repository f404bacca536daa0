"""A Teams `adaptiveCard/action` invoke (a click on one of our cards' Action.Execute
buttons), taken like a Slack click: checked against our ledger and the catalog its post
was sent with, recorded as the first answer by one create() (interactions.record), and the
card updated in place off the request path (interactions.handoff, then
interactions.show through Teams' `PUT .../activities/{id}`).

The invoke's answer is Teams' AdaptiveCardInvokeResponse: a message the clicker sees ("Your
answer is in", "X already answered: Yes", why a skip was refused). A value that is not a
button of ours, or names an action its post did not offer, records nothing and is answered
with a message too, never an error card. The caller (the `teams` target) has authenticated
the activity (its Bot Framework JWT) before this runs."""

from __future__ import annotations

from typing import Any

from microsoft_teams.api.models.adaptive_card import (
    AdaptiveCardActionMessageResponse,
    AdaptiveCardInvokeValue,
)
from pydantic import ValidationError

from core import logs
from core.actions import parse_button_value
from core.models import TEAMS_USER_ID
from core.runtime import Runtime
from core.store import is_document_id
from interactions.click import Click
from interactions.handoff import hand_off
from interactions.in_time import in_time
from interactions.record import Answer, Recorded, record_click

ACTION_INVOKE = "adaptiveCard/action"
_NOT_A_BUTTON = "This button is not one of ours any more."
_TAKING = "Taking your answer: the card shows it once it is in."


def parse_action(activity: dict[str, Any]) -> Click | None:
    """The click an `adaptiveCard/action` invoke carries: who (`from.id`, their Teams id),
    the delivery and action its `data.value` names (core.actions.button_value; the verb must
    be that action), and the conversation (without a thread's `;messageid=`). None for
    anything else or anything malformed."""
    if activity.get("type") != "invoke" or activity.get("name") != ACTION_INVOKE:
        return None
    try:
        value = AdaptiveCardInvokeValue.model_validate(activity.get("value"))
    except ValidationError:
        return None
    named = parse_button_value(value.action.data.get("value"))
    user = _get(activity, "from", "id")
    if named is None or value.action.verb != named[1] or not is_document_id(named[0]):
        return None
    if not isinstance(user, str) or not TEAMS_USER_ID.match(user):
        return None
    conversation = _get(activity, "conversation", "id")
    channel = conversation.split(";", 1)[0] if isinstance(conversation, str) else None
    return Click(user, named[0], named[1], channel, None)


def answer_action(rt: Runtime, activity: dict[str, Any]) -> dict[str, Any]:
    """`take_action`'s answer, or, when its work (Firestore slow) is not done within
    ANSWER_WITHIN_SECONDS, an answer that promises nothing (interactions.in_time)."""
    return in_time(
        lambda: take_action(rt, activity),
        _message(_TAKING),
        lambda: parse_action(activity),
        platform="teams",
    )


def take_action(rt: Runtime, activity: dict[str, Any]) -> dict[str, Any]:
    """The invoke's answer (the body of Teams' invoke response), once the click is recorded
    or refused."""
    click = parse_action(activity)
    if click is None:
        logs.warning("interaction ignored", reason="malformed", platform="teams")
        return _message(_NOT_A_BUTTON)
    recorded = record_click(rt, click)
    logs.info(
        _LINES.get(recorded.answer, "interaction ignored"),
        delivery_id=click.delivery_id,
        user=click.user,
        action_id=click.action_id,
        outcome=recorded.answer.value,
        platform="teams",
    )
    if recorded.answer is Answer.RECORDED:
        hand_off(rt, click.delivery_id)
    return _message(_told(recorded, click))


_LINES = {
    Answer.RECORDED: "answer recorded",
    Answer.ALREADY_ANSWERED: "answer not taken: already answered",
    Answer.REFUSED: "action refused",
}


def _told(recorded: Recorded, click: Click) -> str:
    label = recorded.action.label if recorded.action is not None else "an answer"
    if recorded.answer is Answer.RECORDED:
        return f"Your answer is in: {label}"
    if recorded.answer is Answer.ALREADY_ANSWERED:
        who = "You" if recorded.user == click.user else "Someone"
        return f"{who} already answered: {label}"
    if recorded.answer is Answer.REFUSED:
        return recorded.reason or "This action is not yours."
    return _NOT_A_BUTTON


def _message(text: str) -> dict[str, Any]:
    response = AdaptiveCardActionMessageResponse(value=text)
    return response.model_dump(by_alias=True, exclude_none=True)


def _get(data: dict[str, Any], *path: str) -> Any:
    value: Any = data
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value
