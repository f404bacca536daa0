"""An operator's settle actions on a message's occurrence (`m:…`; processor.settle):

- `mark_delivered` writes what a delivered post writes (MessageKind.outcome_writes): a
  one-off ends `sent`, a series moves to its next occurrence;
- `release` makes the message due now on the same occurrence, claimed again through the
  same ledger entry.

Only the occurrence the message is on may be settled: a `sending` message's lease
occurrence, or a parked (`unconfirmed`, `failed`) message's newest ledger entry. Settling an
older one would take the message back from a newer occurrence (perhaps in flight) and post
the old one as well. New ledger entries of a message are only ever written together with
the message, so the settle's precondition on the message read covers this answer too.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from core.documents.deliveries import LedgerField, LedgerStatus, LedgerWrite
from core.documents.leases import LEASE, LeaseField
from core.documents.messages import WAITING, MessageField, MessageWrite, Status
from core.documents.write import DELETE
from core.errors import DocumentError
from core.models import Message, message_delivery_id
from core.runtime import Runtime
from core.slack import Outcome, PostResult
from core.store import DELIVERIES
from processor.abc import MARK_DELIVERED, Claim, Doc, Kind, Settle, Writes
from processor.held import live_until
from processor.outcome import Result
from processor.settle import SettleRefused

SETTLEABLE_MESSAGE = (Status.SENDING, Status.UNCONFIRMED, Status.FAILED)


def message_settle_writes(
    rt: Runtime, kind: Kind[Message], action: Settle, entry: Doc, data: Doc
) -> Writes:
    now, delivery_id = action.at, action.delivery_id
    message_id = str(entry.get(LedgerField.MESSAGE_ID))
    _refuse_unless_current(rt, delivery_id, message_id, entry, data, now)
    try:
        message = Message.from_document(message_id, data)
    except DocumentError as exc:
        raise SettleRefused(
            f"message {message_id!r} cannot be sent as stored ({exc.code}: {exc.message}); "
            "fix the document first"
        ) from None
    occurrence = entry[LedgerField.OCCURRENCE_AT]
    if action.name == MARK_DELIVERED:
        claim = Claim(kind, message, message_id, occurrence, delivery_id, 0, action.by, 0, 0)
        return kind.outcome_writes(claim, PostResult(Outcome.DELIVERED, ts=action.ts), now, 0)
    released = MessageWrite(
        status=Status.RECURRING if message.is_recurring else Status.PENDING,
        next_run_at=now,
        occurrence_at=occurrence,
        lease=DELETE,
    )
    ledger = LedgerWrite(status=LedgerStatus.RELEASED, retry_at=now)
    return Writes(released, ledger, Result.RELEASED)


def _refuse_unless_current(
    rt: Runtime,
    delivery_id: str,
    message_id: str,
    entry: dict[str, Any],
    data: dict[str, Any],
    now: datetime,
) -> None:
    status = data.get(MessageField.STATUS)
    if status not in SETTLEABLE_MESSAGE:
        due = data.get(MessageField.NEXT_RUN_AT)
        waiting = f", next due at {due}" if status in WAITING else ""
        raise SettleRefused(
            f"delivery {delivery_id!r} is not the current occurrence of message "
            f"{message_id!r}: the message is {status!r}{waiting}; it has moved on"
        )
    stored_lease = data.get(LEASE)
    lease: dict[str, Any] = stored_lease if isinstance(stored_lease, dict) else {}
    if status == Status.SENDING:
        current = lease.get(LeaseField.OCCURRENCE_AT)
    else:
        current = newest_occurrence(rt.db, message_id)
    if current != entry.get(LedgerField.OCCURRENCE_AT):
        on = message_delivery_id(message_id, current) if isinstance(current, datetime) else None
        raise SettleRefused(
            f"delivery {delivery_id!r} is not the current occurrence of message "
            f"{message_id!r}: the message is {status!r} on {on!r}; settle that one instead"
        )
    lease_end = live_until(lease, now)
    if status == Status.SENDING and lease_end is not None:
        raise SettleRefused(
            f"delivery {delivery_id!r} is being sent under a live lease until {lease_end}"
        )


def newest_occurrence(db: firestore.Client, message_id: str) -> Any:
    """The occurrence of the message's newest ledger entry (None without one), through the
    (message_id, occurrence_at desc) index that the deliveries listing uses."""
    query = (
        db.collection(DELIVERIES)
        .where(filter=FieldFilter(LedgerField.MESSAGE_ID, "==", message_id))
        .order_by(LedgerField.OCCURRENCE_AT, direction=firestore.Query.DESCENDING)
        .limit(1)
    )
    return next((s.get(LedgerField.OCCURRENCE_AT) for s in query.stream()), None)
