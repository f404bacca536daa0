"""Missed occurrences: what a claim records for the occurrences of a series that will never
be sent (see core.schedule.catch_up). They are `create()`d as `skipped` ledger entries
(reason `missed`) in the claim's own batch, so they are recorded exactly when the claim
lands, and a second worker's identical records fail its batch rather than doubling them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from google.api_core.exceptions import AlreadyExists, FailedPrecondition
from google.cloud import firestore

from core import logs
from core.models import LedgerStatus, Message, message_delivery_id
from core.runtime import Runtime
from core.schedule import CatchUp
from core.store import DELIVERIES, Snapshot
from messages.advance import after_occurrence
from processor.abc import Missed
from processor.ledger_entries import existing_ids, new_ledger_entry
from processor.outcome import Result


def missed_records(rt: Runtime, message: Message, plan: CatchUp, now: datetime) -> list[Missed]:
    records = []
    for entry in plan.missed:
        fields = new_ledger_entry(
            message,
            entry.occurrence_at,
            rt.worker_id,
            status=LedgerStatus.SKIPPED,
            reason="missed",
            missed_count=entry.count,
            skipped_at=now,
        )
        if entry.through is not None:
            fields["missed_through"] = entry.through
        ref = rt.db.collection(DELIVERIES).document(
            message_delivery_id(message.id, entry.occurrence_at)
        )
        records.append(Missed(ref, fields, entry.count))
    return records


def counted(missed: Sequence[Missed]) -> dict[str, Any]:
    total = sum(r.count for r in missed)
    return {"missed_count": firestore.Increment(total)} if total else {}


def create_all(batch: firestore.WriteBatch, records: Iterable[Missed]) -> None:
    for record in records:
        batch.create(record.ref, record.fields)


def skip_missed(
    rt: Runtime,
    snap: Snapshot,
    message: Message,
    plan: CatchUp,
    missed: list[Missed],
    now: datetime,
) -> Result:
    """Every due occurrence is past its grace: nothing is sent; each is recorded `skipped`
    and the series moves on to its first occurrence after now (or completes)."""
    update = after_occurrence(message, plan.latest) | {
        "updated_at": now,
        "version": firestore.Increment(1),
    }
    for _ in range(2):
        batch = rt.db.batch()
        batch.update(
            snap.reference,
            update | counted(missed),
            option=rt.db.write_option(last_update_time=snap.update_time),
        )
        create_all(batch, missed)
        try:
            batch.commit()  # pragma: SYNCPOINT claim
        except FailedPrecondition:
            return Result.DUPLICATE
        except AlreadyExists:
            existing = existing_ids(rt, [r.ref for r in missed])
            missed = [r for r in missed if r.ref.id not in existing]
            continue
        log_missed(message, missed)
        return Result.SKIPPED
    return Result.DUPLICATE


def log_missed(message: Message, missed: Sequence[Missed]) -> None:
    """One line per claim that recorded missed occurrences (not one per occurrence: a
    minutely series down for a week would flood the log)."""
    if not missed:
        return
    logs.warning(
        "occurrences missed: recorded as skipped, never sent",
        message_id=message.id,
        delivery_id=missed[-1].ref.id,
        occurrence_at=missed[-1].fields["occurrence_at"],
        first_missed_at=missed[0].fields["occurrence_at"],
        missed_count=sum(r.count for r in missed),
        status="skipped",
        error_code="missed",
        channel=message.channel,
    )
