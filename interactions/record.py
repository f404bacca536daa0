"""A verified click, checked against our ledger and the message's stored catalog, recorded
as the first answer or refused as a later one.

The answer is the create() of `responses/{delivery_id}:{user}` (`responses/{delivery_id}`
when the message sets `one_answer`): Firestore refuses a second create of the same id, so of
any number of concurrent clicks exactly one is recorded, with no read before the write that
a concurrent click could slip past."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from google.api_core.exceptions import AlreadyExists

from core.actions import Action, catalog, find
from core.documents.deliveries import LedgerField
from core.documents.messages import MessageField
from core.documents.responses import ResponseField
from core.errors import DocumentError
from core.runtime import Runtime
from core.store import DELIVERIES, MESSAGES, RESPONSES, is_document_id
from interactions.click import Click


class Answer(enum.Enum):
    RECORDED = "recorded"
    ALREADY_ANSWERED = "already_answered"
    NOT_OURS = "not_ours"  # no such delivery of a message with buttons, or another channel
    UNKNOWN_ACTION = "unknown_action"  # not an id of the message's catalog


@dataclass(frozen=True)
class Recorded:
    answer: Answer
    # The answer that counts: this click's when RECORDED, the earlier one when ALREADY.
    action: Action | None = None
    user: str | None = None


def response_id(delivery_id: str, user: str, one_answer: bool) -> str:
    return delivery_id if one_answer else f"{delivery_id}:{user}"


def record_click(rt: Runtime, click: Click) -> Recorded:
    found = _catalog_of(rt, click)
    if found is None:
        return Recorded(Answer.NOT_OURS)
    message_id, actions, one_answer = found
    action = find(actions, click.action_id)
    if action is None:
        return Recorded(Answer.UNKNOWN_ACTION)
    # The catalog is read; a concurrent click may be anywhere from here on.
    document_id = response_id(click.delivery_id, click.user, one_answer)  # pragma: SYNCPOINT answer
    reference = rt.db.collection(RESPONSES).document(document_id)
    answer = {
        ResponseField.DELIVERY_ID.value: click.delivery_id,
        ResponseField.MESSAGE_ID.value: message_id,
        ResponseField.USER.value: click.user,
        ResponseField.ACTION_ID.value: action.id,
        ResponseField.ANSWERED_AT.value: rt.clock.now(),
        ResponseField.PENDING_UPDATE.value: True,
    }
    try:
        reference.create(answer)
    except AlreadyExists:
        earlier = reference.get().to_dict() or {}
        first = find(actions, str(earlier.get(ResponseField.ACTION_ID)))
        return Recorded(Answer.ALREADY_ANSWERED, first, earlier.get(ResponseField.USER))
    return Recorded(Answer.RECORDED, action, click.user)


def _catalog_of(rt: Runtime, click: Click) -> tuple[str, tuple[Action, ...], bool] | None:
    """The message behind the click's delivery: its id, catalog and `one_answer`; None when
    the delivery is not one of ours with buttons, or was posted to another channel."""
    entry = rt.db.collection(DELIVERIES).document(click.delivery_id).get()
    ledger: dict[str, Any] = entry.to_dict() or {}
    message_id = ledger.get(LedgerField.MESSAGE_ID)
    posted_to = ledger.get(LedgerField.CHANNEL)
    if not isinstance(message_id, str) or not is_document_id(message_id):
        return None
    if click.channel is not None and posted_to is not None and click.channel != posted_to:
        return None
    message = rt.db.collection(MESSAGES).document(message_id).get().to_dict() or {}
    try:
        actions = catalog(message.get(MessageField.ACTIONS))
    except DocumentError:
        return None
    if not actions:
        return None
    return message_id, actions, message.get(MessageField.ONE_ANSWER) is True
