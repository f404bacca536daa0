"""Missed rotation days: turn days on which nothing ran (the processor was down). Only
today's turn is posted; each missed day is recorded as a `skipped` ledger entry (reason
`missed`, nobody named, the order not moved) in the claim's own batch, so an outage shows in
the rotation's deliveries instead of leaving a silent gap."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from google.cloud import firestore

from core import logs
from core.models import LedgerStatus, rotation_delivery_id
from core.rotation import Rotation
from core.runtime import Runtime
from core.store import DELIVERIES
from processor.ledger_entries import existing_ids, new_day_entry

# The most recent missed days recorded one by one; older ones are only counted in the log.
MAX_RECORDED = 31


@dataclass(frozen=True)
class MissedDays:
    refs: list[firestore.DocumentReference]
    fields: list[dict[str, Any]]
    total: int  # missed turn days, recorded or not


def missed_day_records(rt: Runtime, rotation: Rotation, today: date, now: datetime) -> MissedDays:
    """The ledger entries to create for the days missed before `today`, less those that
    exist already (a day rolled back earlier keeps its own entry)."""
    days = rotation.missed_days(today)
    recent = days[-MAX_RECORDED:]
    refs = [
        rt.db.collection(DELIVERIES).document(rotation_delivery_id(rotation.id, day))
        for day in recent
    ]
    existing = existing_ids(rt, refs) if refs else set()
    kept = [(ref, day) for ref, day in zip(refs, recent, strict=True) if ref.id not in existing]
    fields = [
        new_day_entry(
            rotation,
            day,
            rt.worker_id,
            status=LedgerStatus.SKIPPED,
            reason="missed",
            skipped_at=now,
        )
        for _, day in kept
    ]
    return MissedDays([ref for ref, _ in kept], fields, len(days))


def create_missed(batch: firestore.WriteBatch, missed: MissedDays) -> None:
    for ref, fields in zip(missed.refs, missed.fields, strict=True):
        batch.create(ref, fields)


def log_missed_days(rotation: Rotation, missed: MissedDays) -> None:
    """One line per claim that recorded missed days (not one per day)."""
    if not missed.refs:
        return
    logs.warning(
        "rotation days missed: recorded as skipped, never posted",
        rotation_id=rotation.id,
        missed_count=missed.total,
        recorded=len(missed.refs),
        first_missed_date=missed.fields[0]["occurrence_date"] if missed.fields else None,
        status="skipped",
        error_code="missed",
        channel=rotation.channel,
    )
