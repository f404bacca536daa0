"""Past rotation days, settled by the next claim (or reschedule) of the rotation.

Missed days: turn days on which nothing ran (the processor was down). Only today's turn is
posted; each missed day is recorded as a `skipped` ledger entry (reason `missed`, nobody
named, the order not moved) in the claim's own batch, so an outage shows in the rotation's
deliveries instead of leaving a silent gap.

Ended days: a past day still `released` (given back for a retry that never came within the
day: the clock jumped past its end, or an operator released it too late) is closed in the
same batch as `skipped` with reason `day_ended`, with one ERROR line and, the first time
for that day, an alert. No day stays `released` once its rotation has moved past it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from core import logs
from core.documents.deliveries import LedgerField, LedgerReason, LedgerStatus, LedgerWrite
from core.documents.errors import ErrorField
from core.documents.write import UNSET
from core.models import rotation_delivery_id
from core.named_batch import NamedBatch
from core.rotation import Rotation
from core.runtime import Runtime
from core.store import DELIVERIES, Snapshot
from processor.abc import Missed
from processor.escalate import escalate
from rotations.ledger import day_entry

# The most recent missed days recorded one by one; older ones are only counted in the log.
MAX_RECORDED = 31


@dataclass(frozen=True)
class MissedDays:
    records: list[Missed]  # the entries to create, the most recent MAX_RECORDED days
    total: int  # missed turn days, recorded or not
    ended: list[Snapshot] = field(default_factory=list)  # past days still `released`
    now: datetime | None = None


def missed_day_records(rt: Runtime, rotation: Rotation, today: date, now: datetime) -> MissedDays:
    """The ledger entries to create for the days missed before `today`, less those that
    exist already; and the rotation's past days still `released`, to close."""
    days = rotation.missed_days(today)
    recent = days[-MAX_RECORDED:]
    refs = [
        rt.db.collection(DELIVERIES).document(rotation_delivery_id(rotation.id, day))
        for day in recent
    ]
    found = {snap.id: snap for snap in rt.db.get_all(refs) if snap.exists} if refs else {}
    skipped = LedgerWrite(status=LedgerStatus.SKIPPED, reason=LedgerReason.MISSED, skipped_at=now)
    records = [
        Missed(ref, day_entry(rotation, day, rt.worker_id, skipped))
        for ref, day in zip(refs, recent, strict=True)
        if ref.id not in found
    ]
    ended = _released_before(rt, rotation, today)
    return MissedDays(records, len(days), ended, now)


def _released_before(rt: Runtime, rotation: Rotation, today: date) -> list[Snapshot]:
    """The rotation's days before `today` still `released`: an equality-only query, served
    by single-field indexes. A rotation has at most a few (one per day given back)."""
    query = (
        rt.db.collection(DELIVERIES)
        .where(filter=FieldFilter(LedgerField.ROTATION_ID, "==", rotation.id))
        .where(filter=FieldFilter(LedgerField.STATUS, "==", LedgerStatus.RELEASED))
        .limit(MAX_RECORDED)
    )
    return [
        snap
        for snap in query.stream()
        if str((snap.to_dict() or {}).get(LedgerField.OCCURRENCE_DATE)) < today.isoformat()
    ]


def create_missed(batch: NamedBatch, missed: MissedDays) -> None:
    """The missed days recorded and the past released days closed, in `batch`."""
    for record in missed.records:
        batch.create(record.ref, record.fields)
    close_ended(batch, missed)


def close_ended(batch: NamedBatch, missed: MissedDays) -> None:
    """The rotation's past days still `released` closed `skipped` (`day_ended`), each under
    its own precondition."""
    for snap in missed.ended:
        escalated = (snap.to_dict() or {}).get(LedgerField.ESCALATED_AT) is not None
        ended = LedgerWrite(
            status=LedgerStatus.SKIPPED,
            reason=LedgerReason.DAY_ENDED,
            skipped_at=missed.now,
            escalated_at=UNSET if escalated else missed.now,
        )
        batch.update(
            snap.reference,
            ended.to_document(),
            option=firestore.Client.write_option(last_update_time=snap.update_time),
        )


def log_missed_days(
    rt: Runtime,
    rotation: Rotation,
    missed: MissedDays,
    recorded: Sequence[Missed] | None = None,
) -> None:
    """One line per claim that recorded missed days (not one per day), and one per day
    closed unposted (escalated the first time for that day). `recorded`: the records the
    claim created, when fewer than planned (some existed already)."""
    for snap in missed.ended:
        _report_ended(rt, rotation, snap)
    records = missed.records if recorded is None else recorded
    if not records:
        return
    logs.warning(
        "rotation days missed: recorded as skipped, never posted",
        rotation_id=rotation.id,
        missed_count=missed.total,
        recorded=len(records),
        first_missed_date=records[0].fields[LedgerField.OCCURRENCE_DATE],
        status=LedgerStatus.SKIPPED,
        error_code=LedgerReason.MISSED,
        channel=rotation.channel,
    )


def _report_ended(rt: Runtime, rotation: Rotation, snap: Snapshot) -> None:
    entry = snap.to_dict() or {}
    error = entry.get(LedgerField.ERROR)
    error = error if isinstance(error, dict) else {}
    fields: dict[str, Any] = {
        "delivery_id": snap.id,
        "occurrence_date": entry.get(LedgerField.OCCURRENCE_DATE),
        "member": entry.get(LedgerField.MEMBER),
        "channel": rotation.channel,
        "last_error_code": error.get(ErrorField.CODE),
    }
    detail = "the turn was given back for a retry that its local day ended before; not posted"
    if entry.get(LedgerField.ESCALATED_AT) is None:
        escalate(
            rt,
            status=LedgerStatus.SKIPPED,
            rotation_id=rotation.id,
            occurrence_at=entry.get(LedgerField.OCCURRENCE_AT),
            error_code=LedgerReason.DAY_ENDED,
            detail=detail,
            **fields,
        )
        return
    logs.error(
        f"delivery skipped: {detail}",
        rotation_id=rotation.id,
        status=LedgerStatus.SKIPPED,
        error_code=LedgerReason.DAY_ENDED,
        **fields,
    )
