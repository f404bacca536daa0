"""The operator's way out of a held lease (processor.held): `fail-held`.

    python -m targets.operator fail-held scheduled_messages/ID --reason "..."
    python -m targets.operator fail-held rotations/ID --reason "..."
    python -m targets.operator fail-held events/ID --reason "..."

For a document whose lease reconciliation cannot settle (it no longer parses, its ledger
entry is not `claimed`, its lease names no occurrence): the lease goes, and nothing is
posted. A message ends `failed` (`last_error.code: operator_failed`; an edit re-arms it);
a rotation gives its claimed day up (`last_processed_date` stays on that day, the order
goes on with the next turn); an event ends `failed` for good (its callers are told so). A
`claimed` ledger entry of that occurrence becomes `failed`;
any other entry keeps what it says. Both record who, when and why. A lease that is live
and not held (a worker is sending right now) is refused.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from google.cloud import firestore

from core import logs
from core.documents.deliveries import LedgerField, LedgerStatus, LedgerWrite, OperatorRecord
from core.documents.errors import StoredError
from core.documents.events import EventStatus, EventWrite
from core.documents.leases import LEASE, LeaseField
from core.documents.messages import MessageField, MessageWrite, Status
from core.documents.rotations import RotationWrite
from core.documents.subjects import SubjectWrite
from core.documents.write import DELETE, UNSET
from core.errors import AppError
from core.models import event_delivery_id, message_delivery_id, rotation_delivery_id
from core.runtime import Runtime
from core.store import DELIVERIES, EVENTS, MESSAGES, ROTATIONS
from processor.held import live_until

OPERATOR_FAILED = "operator_failed"
# The collections whose leases it ends; those whose `sending` needs no lease to be ended.
_LEASED = (MESSAGES, ROTATIONS, EVENTS)
_SENDING_WITHOUT_LEASE = (MESSAGES, EVENTS)


class FailHeldRefused(AppError):
    """`fail-held` cannot be applied to this document; the message says why."""


def fail_held(rt: Runtime, path: str, reason: str, by: str) -> None:
    if not reason.strip():
        raise FailHeldRefused("a reason is required: it is recorded on the document")
    collection, _, doc_id = path.partition("/")
    if collection not in _LEASED or not doc_id or "/" in doc_id:
        raise FailHeldRefused(f"{path!r} is not {MESSAGES}/ID, {ROTATIONS}/ID or {EVENTS}/ID")
    now = rt.clock.now()
    snap = rt.db.collection(collection).document(doc_id).get()
    data = snap.to_dict()
    if data is None:
        raise FailHeldRefused(f"no document {path!r}")
    lease = data.get(LEASE)
    if not isinstance(lease, dict):
        sending = data.get(MessageField.STATUS) == Status.SENDING  # an event's too
        if collection not in _SENDING_WITHOUT_LEASE or not sending:
            raise FailHeldRefused(f"{path!r} holds no lease: nothing to fail")
        lease = {}  # `sending` with no lease a worker could hold (doctor: missing_lease)
    expires_at = live_until(lease, now)
    if expires_at is not None:
        raise FailHeldRefused(f"{path!r} is being sent under a live lease until {expires_at}")
    error = StoredError(OPERATOR_FAILED, reason, now)
    record = OperatorRecord("fail_held", reason, by, now)
    delivery_id = _delivery_id(collection, doc_id, lease)
    batch = rt.db.batch()
    batch.update(
        snap.reference,
        _failed(collection, lease, error).stamped(now).to_document(),
        option=rt.db.write_option(last_update_time=snap.update_time),
    )
    ledger_status = _fail_claimed_entry(rt, batch, delivery_id, error, record)
    batch.commit()
    logs.warning(
        "operator fail_held",
        document=path,
        delivery_id=delivery_id,
        ledger_status=ledger_status,
        status="failed",
        reason=reason,
        by=by,
    )


def _failed(collection: str, lease: dict[str, Any], error: StoredError) -> SubjectWrite:
    """The subject's write: a message or an event `failed`; a rotation's claimed day given
    up."""
    if collection == MESSAGES:
        return MessageWrite(status=Status.FAILED, lease=DELETE, last_error=error)
    if collection == EVENTS:
        return EventWrite(status=EventStatus.FAILED, lease=DELETE, last_error=error)
    day = lease.get(LeaseField.OCCURRENCE_DATE)
    return RotationWrite(
        lease=DELETE,
        last_error=error,
        rollback=DELETE,
        last_processed_date=day if isinstance(day, str) else UNSET,
    )


def _delivery_id(collection: str, doc_id: str, lease: dict[str, Any]) -> str | None:
    """The ledger id of the occurrence the lease names, if it names one (an event has one
    occurrence, whatever its lease says)."""
    if collection == EVENTS:
        return event_delivery_id(doc_id)
    if collection == MESSAGES:
        occurrence = lease.get(LeaseField.OCCURRENCE_AT)
        return message_delivery_id(doc_id, occurrence) if isinstance(occurrence, datetime) else None
    try:
        day = date.fromisoformat(str(lease.get(LeaseField.OCCURRENCE_DATE)))
        return rotation_delivery_id(doc_id, day)
    except ValueError:
        return None


def _fail_claimed_entry(
    rt: Runtime,
    batch: firestore.WriteBatch,
    delivery_id: str | None,
    error: StoredError,
    record: OperatorRecord,
) -> str | None:
    """The occurrence's ledger entry, `failed` if it was `claimed`; its status as found."""
    if delivery_id is None:
        return None
    ledger = rt.db.collection(DELIVERIES).document(delivery_id).get()
    status = (ledger.to_dict() or {}).get(LedgerField.STATUS)
    if status == LedgerStatus.CLAIMED:
        batch.update(
            ledger.reference,
            LedgerWrite(status=LedgerStatus.FAILED, error=error, operator=record).to_document(),
            option=rt.db.write_option(last_update_time=ledger.update_time),
        )
    return status if isinstance(status, str) else None
