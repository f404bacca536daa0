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

from core.errors import DocumentError
from core.models import LedgerStatus, Message, Status, message_delivery_id
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
    message_id = str(entry.get("message_id"))
    _refuse_unless_current(rt, delivery_id, message_id, entry, data, now)
    try:
        message = Message.from_document(message_id, data)
    except DocumentError as exc:
        raise SettleRefused(
            f"message {message_id!r} cannot be sent as stored ({exc.code}: {exc.message}); "
            "fix the document first"
        ) from None
    occurrence = entry["occurrence_at"]
    if action.name == MARK_DELIVERED:
        claim = Claim(kind, message, message_id, occurrence, delivery_id, 0, action.by, 0, 0)
        return kind.outcome_writes(claim, PostResult(Outcome.DELIVERED, ts=action.ts), now, 0)
    released = {
        "status": Status.RECURRING if message.is_recurring else Status.PENDING,
        "next_run_at": now,
        "occurrence_at": occurrence,
        "lease": firestore.DELETE_FIELD,
    }
    return Writes(released, {"status": LedgerStatus.RELEASED, "retry_at": now}, Result.RELEASED)


def _refuse_unless_current(
    rt: Runtime,
    delivery_id: str,
    message_id: str,
    entry: dict[str, Any],
    data: dict[str, Any],
    now: datetime,
) -> None:
    status = data.get("status")
    if status not in SETTLEABLE_MESSAGE:
        waiting = f", next due at {data.get('next_run_at')}" if status in Status.WAITING else ""
        raise SettleRefused(
            f"delivery {delivery_id!r} is not the current occurrence of message "
            f"{message_id!r}: the message is {status!r}{waiting}; it has moved on"
        )
    stored_lease = data.get("lease")
    lease: dict[str, Any] = stored_lease if isinstance(stored_lease, dict) else {}
    if status == Status.SENDING:
        current = lease.get("occurrence_at")
    else:
        current = newest_occurrence(rt.db, message_id)
    if current != entry.get("occurrence_at"):
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
        .where(filter=FieldFilter("message_id", "==", message_id))
        .order_by("occurrence_at", direction=firestore.Query.DESCENDING)
        .limit(1)
    )
    return next((s.get("occurrence_at") for s in query.stream()), None)
