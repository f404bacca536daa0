"""What a click records (its `responses` document) and what became of it: recorded as the
first answer, refused as a later one, refused for a reason the clicker is told, or ignored
(not ours, not in the catalog)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from google.cloud import firestore

from core.actions import Action, find
from core.documents.deliveries import LedgerKind
from core.documents.responses import ResponseField
from core.runtime import Runtime
from interactions.click import Click
from interactions.posted import Posted


class Answer(enum.Enum):
    RECORDED = "recorded"
    ALREADY_ANSWERED = "already_answered"
    NOT_OURS = "not_ours"  # no such delivery of a message with buttons, or another channel
    UNKNOWN_ACTION = "unknown_action"  # not an id of the catalog the post was sent with
    REFUSED = "refused"  # an action this click may not take (`reason` tells the clicker why)


@dataclass(frozen=True)
class Recorded:
    answer: Answer
    # The answer that counts: this click's when RECORDED, the earlier one when ALREADY.
    action: Action | None = None
    user: str | None = None
    reason: str | None = None  # REFUSED: the ephemeral reply's text


def response_id(delivery_id: str, user: str, one_answer: bool) -> str:
    return delivery_id if one_answer else f"{delivery_id}:{user}"


def answer_fields(rt: Runtime, click: Click, posted: Posted, action: Action) -> dict[str, Any]:
    """The response document a click creates, `pending_update` until the post shows it."""
    subject = (
        ResponseField.MESSAGE_ID if posted.kind is LedgerKind.MESSAGE else ResponseField.ROTATION_ID
    )
    return {
        ResponseField.DELIVERY_ID.value: click.delivery_id,
        subject.value: posted.subject_id,
        ResponseField.USER.value: click.user,
        ResponseField.ACTION_ID.value: action.id,
        ResponseField.ANSWERED_AT.value: rt.clock.now(),
        ResponseField.PENDING_UPDATE.value: True,
    }


def earlier_answer(reference: firestore.DocumentReference, posted: Posted) -> Recorded:
    """The answer that won, for the click that lost to it."""
    earlier = reference.get().to_dict() or {}
    first = find(posted.actions, str(earlier.get(ResponseField.ACTION_ID)))
    return Recorded(Answer.ALREADY_ANSWERED, first, earlier.get(ResponseField.USER))
