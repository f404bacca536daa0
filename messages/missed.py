"""Missed occurrences: what a claim records for the occurrences of a series that will never
be sent (see core.schedule.catch_up). They are `create()`d as `skipped` ledger entries
(reason `missed`) in the claim's own batch, so they are recorded exactly when the claim
lands, and a second worker's identical records fail its batch rather than doubling them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime

from google.api_core.exceptions import AlreadyExists, FailedPrecondition
from google.cloud import firestore

from core import logs
from core.documents.deliveries import LedgerField, LedgerReason, LedgerStatus, LedgerWrite
from core.documents.write import UNSET, Add, Unset
from core.models import Message, message_delivery_id
from core.runtime import Runtime
from core.schedule import CatchUp
from core.store import DELIVERIES, Snapshot, existing_ids
from messages.advance import settled
from messages.ledger import message_entry
from processor.abc import Missed
from processor.outcome import Result


def missed_records(rt: Runtime, message: Message, plan: CatchUp, now: datetime) -> list[Missed]:
    records = []
    for entry in plan.missed:
        write = LedgerWrite(
            status=LedgerStatus.SKIPPED,
            reason=LedgerReason.MISSED,
            missed_count=entry.count,
            skipped_at=now,
            missed_through=UNSET if entry.through is None else entry.through,
        )
        fields = message_entry(message, entry.occurrence_at, rt.worker_id, write)
        ref = rt.db.collection(DELIVERIES).document(
            message_delivery_id(message.id, entry.occurrence_at)
        )
        records.append(Missed(ref, fields, entry.count))
    return records


def counted(missed: Sequence[Missed]) -> Add | Unset:
    """The message's `missed_count` raised by the occurrences `missed` stands for."""
    total = sum(r.count for r in missed)
    return Add(total) if total else UNSET


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
    update = settled(message, plan.latest).stamped(now)
    for _ in range(2):
        batch = rt.db.batch()
        batch.update(
            snap.reference,
            replace(update, missed_count=counted(missed)).to_document(),
            option=rt.db.write_option(last_update_time=snap.update_time),
        )
        create_all(batch, missed)
        try:
            batch.commit()  # pragma: SYNCPOINT claim
        except FailedPrecondition:
            return Result.DUPLICATE
        except AlreadyExists:
            existing = existing_ids(rt.db, [r.ref for r in missed])
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
        occurrence_at=missed[-1].fields[LedgerField.OCCURRENCE_AT],
        first_missed_at=missed[0].fields[LedgerField.OCCURRENCE_AT],
        missed_count=sum(r.count for r in missed),
        status=LedgerStatus.SKIPPED,
        error_code=LedgerReason.MISSED,
        channel=message.channel,
    )
