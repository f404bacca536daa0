"""The operator's way out of a held lease (processor.held): `fail-held`.

    python -m targets.operator fail-held scheduled_messages/ID --reason "..."
    python -m targets.operator fail-held rotations/ID --reason "..."
    python -m targets.operator fail-held events/ID --reason "..."

For a document whose lease reconciliation cannot settle (it no longer parses, its ledger
entry is not `claimed`, its lease names no occurrence), of any kind handed in: the lease
goes, and nothing is posted. What the subject becomes is its kind's
(processor.abc.Operates.held_failed): a message ends `failed` (`last_error.code:
operator_failed`; an edit re-arms it), an event ends `failed` for good (its callers are told
so), a rotation gives its claimed day up (`last_processed_date` stays on that day, the order
goes on with the next turn). A `claimed` ledger entry of that occurrence becomes `failed`;
any other entry keeps what it says. Both record who, when and why. A lease that is live
and not held (a worker is sending right now) is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.cloud import firestore

from core import logs
from core.documents.deliveries import LedgerField, LedgerStatus, LedgerWrite, OperatorRecord
from core.documents.errors import StoredError
from core.documents.leases import LEASE
from core.documents.subjects import SubjectField
from core.errors import AppError
from core.runtime import Runtime
from core.store import DELIVERIES
from processor.abc import Operates
from processor.held import refuse_live

OPERATOR_FAILED = "operator_failed"


class FailHeldRefused(AppError):
    """`fail-held` cannot be applied to this document; the message says why."""


def fail_held(rt: Runtime, kinds: Sequence[Operates], path: str, reason: str, by: str) -> None:
    if not reason.strip():
        raise FailHeldRefused("a reason is required: it is recorded on the document")
    kind, doc_id = _kind_of(kinds, path)
    now = rt.clock.now()
    snap = rt.db.collection(kind.collection).document(doc_id).get()
    data = snap.to_dict()
    if data is None:
        raise FailHeldRefused(f"no document {path!r}")
    lease = data.get(LEASE)
    if not isinstance(lease, dict):
        sending = kind.queue.sending
        if sending is None or data.get(SubjectField.STATUS) != sending:
            raise FailHeldRefused(f"{path!r} holds no lease: nothing to fail")
        data = {**data, LEASE: {}}  # `sending` with no lease a worker could hold (doctor)
    refuse_live(FailHeldRefused, repr(path), data[LEASE], now)
    error = StoredError(OPERATOR_FAILED, reason, now)
    record = OperatorRecord("fail_held", reason, by, now)
    failed, delivery_id = kind.held_failed(doc_id, data, error)
    batch = rt.db.batch()
    batch.update(
        snap.reference,
        failed.stamped(now).to_document(),
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


def _kind_of(kinds: Sequence[Operates], path: str) -> tuple[Operates, str]:
    collection, _, doc_id = path.partition("/")
    for kind in kinds:
        if kind.collection == collection and doc_id and "/" not in doc_id:
            return kind, doc_id
    ids = " or ".join(f"{kind.collection}/ID" for kind in kinds)
    raise FailHeldRefused(f"{path!r} is not {ids}")


def _fail_claimed_entry(
    rt: Runtime,
    batch: firestore.WriteBatch,
    delivery_id: str | None,
    error: StoredError,
    record: OperatorRecord,
) -> Any:
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
