"""An occurrence a person's gate held back (processor.gates): its ledger entry is written
`skipped` with the gate's `reason`, nothing is posted, and the message moves on (a series to
its next occurrence, a one-off ends `skipped`), in one batch under the versions read of the
message and of the person's `people` document, with the claim's missed records. An opt-in
or a give-back written since the gates read the person fails the batch whole: the
occurrence stays due and is planned again on the next pass. One log line."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from google.api_core.exceptions import AlreadyExists, FailedPrecondition

from core import logs
from core.documents.deliveries import (
    RECLAIMABLE,
    LedgerField,
    LedgerReason,
    LedgerStatus,
    LedgerWrite,
)
from core.documents.messages import MessageWrite, Status
from core.documents.write import DELETE
from core.models import Message
from core.runtime import Runtime
from core.store import Snapshot
from messages.advance import settled
from messages.missed import log_missed
from messages.plan import MessagePlan
from processor.abc import Kind, Missed
from processor.claim import repair_from_ledger
from processor.ledger_entries import existing_ids, message_entry
from processor.outcome import Result


def skip_gated(
    rt: Runtime,
    kind: Kind,
    snap: Snapshot,
    plan: MessagePlan,
    occurrence: datetime,
    missed: Sequence[Missed],
    reason: LedgerReason,
) -> Result:
    """Record `occurrence` as held back by `reason`, under the person's version its gates
    read (`plan.reservation`); `plan` repairs the message from a ledger entry that already
    settled the occurrence."""
    message = plan.message
    now = rt.clock.now()
    update = settled(message, occurrence)
    if message.recurrence is None:
        update = MessageWrite(status=Status.SKIPPED, lease=DELETE, occurrence_at=DELETE, attempts=0)
    skipped = LedgerWrite(status=LedgerStatus.SKIPPED, reason=reason, skipped_at=now)
    left = list(missed)
    ledger = None  # read once a create() found the entry (or a missed record) there
    for _ in range(2):
        batch = rt.db.batch()
        batch.update(
            snap.reference,
            update.stamped(now).to_document(),
            option=rt.db.write_option(last_update_time=snap.update_time),
        )
        if ledger is not None and ledger.exists:
            entry = ledger.to_dict() or {}
            if entry.get(LedgerField.STATUS) not in RECLAIMABLE:
                return repair_from_ledger(rt, kind, snap, plan, entry, left)
            # A released (or failed) attempt, held back on its retry.
            batch.update(
                plan.ledger_ref,
                skipped.to_document(),
                option=rt.db.write_option(last_update_time=ledger.update_time),
            )
        else:
            batch.create(plan.ledger_ref, message_entry(message, occurrence, rt.worker_id, skipped))
        for record in left:
            batch.create(record.ref, record.fields)
        plan.alongside(batch)  # the person's version the gates decided on, last
        try:
            results = batch.commit()  # pragma: SYNCPOINT gated
        except FailedPrecondition:
            return Result.DUPLICATE
        except AlreadyExists:
            ledger = plan.ledger_ref.get()
            existing = existing_ids(rt, [r.ref for r in left])
            left = [r for r in left if r.ref.id not in existing]
            continue
        plan.landed(results)
        log_missed(message, left)
        _log_skipped(message, plan.ledger_ref.id, occurrence, reason)
        return Result.SKIPPED
    return Result.DUPLICATE


def _log_skipped(
    message: Message, delivery_id: str, occurrence: datetime, reason: LedgerReason
) -> None:
    logs.info(
        "held back by a gate; not sent",
        message_id=message.id,
        delivery_id=delivery_id,
        occurrence_at=occurrence,
        user=message.user,
        category=message.category,
        status=Result.SKIPPED.value,
        reason=reason.value,
    )
