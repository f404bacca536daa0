"""`POST /messages/{id}/retry`: a `failed` message's failed occurrence sent once more.

The occurrence is the message's newest ledger entry, which must be `failed`. It is released
the way an operator's `release` does (processor.settle: the message due now on the same
occurrence, the entry `released`, who and why recorded on it, both written under the
versions read), then claimed and sent during the request through the same entry
(composer.send_now.send_pinned), so it is posted at most once more however often retry is
asked for: a second call finds the message no longer `failed` (409)."""

from __future__ import annotations

from typing import Any

from google.api_core.exceptions import FailedPrecondition

from composer.actor import actor
from composer.send_now import send_pinned
from composer.versions import read
from core.documents.deliveries import LedgerField, LedgerStatus
from core.documents.messages import MessageField, Status
from core.errors import Conflict
from core.models import message_delivery_id
from core.runtime import Runtime
from core.store import DELIVERIES, MESSAGES, newest_entry
from messages.kind import MESSAGE_KIND
from processor.abc import RELEASE, Settle
from processor.settle import SettleRefused, settle

REASON = "retried through the API (POST /messages/{id}/retry)"
BY = "api"


def retry_message(rt: Runtime, message_id: str, *, by: str | None = None) -> dict[str, Any]:
    """`by` (else the request's principal: composer.actor) is recorded as who released the
    ledger entry."""
    data = read(rt.db.collection(MESSAGES).document(message_id), "message").to_dict() or {}
    status = data.get(MessageField.STATUS)
    if status != Status.FAILED:
        raise Conflict(
            f"the message is {status}: only a failed message can be retried",
            [{"field": MessageField.STATUS.value, "message": str(status)}],
        )
    occurrence = newest_entry(rt.db, LedgerField.MESSAGE_ID, message_id, LedgerField.OCCURRENCE_AT)
    if occurrence is None:
        raise Conflict(
            "the message failed before any occurrence was recorded "
            "(it cannot be sent as stored): edit it instead"
        )
    delivery_id = message_delivery_id(message_id, occurrence)
    entry = rt.db.collection(DELIVERIES).document(delivery_id).get().to_dict() or {}
    if entry.get(LedgerField.STATUS) != LedgerStatus.FAILED:
        raise Conflict(f"delivery {delivery_id!r} is {entry.get(LedgerField.STATUS)!r}, not failed")
    try:
        released = Settle(RELEASE, delivery_id, REASON, actor(by) or BY, rt.clock.now())
        settle(rt, [MESSAGE_KIND], released)
    except SettleRefused as exc:
        raise Conflict(str(exc)) from None
    except FailedPrecondition:  # changed since the read: a concurrent retry or edit won
        raise Conflict("the message changed while it was being retried") from None
    after: dict[str, Any] = send_pinned(rt, message_id, occurrence, data)["message"]
    return after
