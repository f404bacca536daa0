"""Planning the claim of a rotation's day (processor.claim commits it).

The claim sets `last_processed_date` to today, advances the order, keeps the previous values
under `rollback`, and takes a `lease`, in the batch that creates the day's ledger document
`r:<rotation>:<local date>`; so a second processor fails the precondition or the create, and
a day is never claimed without a lease that reconciliation will settle. A day that is not
open after all is settled here instead: the rotation rescheduled, or the day recorded
`skipped` when every member is out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from google.api_core.exceptions import AlreadyExists, FailedPrecondition
from google.cloud import firestore

from core import logs
from core.documents.deliveries import LedgerField, LedgerReason, LedgerStatus, LedgerWrite
from core.documents.leases import LEASE, Lease, check_lease
from core.documents.rotations import Rollback, RotationField, RotationStatus, RotationWrite
from core.errors import DocumentError
from core.models import rotation_delivery_id
from core.rotation import Rotation, Turn, turn_for
from core.runtime import Runtime
from core.store import DELIVERIES, Snapshot
from processor.abc import Kind, Missed
from processor.ledger_entries import day_entry
from processor.outcome import Result
from processor.reject import reject
from rotations.day import DayTurn, pinned_day
from rotations.missed_days import (
    MissedDays,
    close_ended,
    create_missed,
    log_missed_days,
    missed_day_records,
)


def plan_day(rt: Runtime, kind: Kind, snap: Snapshot) -> DayPlan | Result:
    """The claim of today's turn of the rotation `snap` (found due); or, when it is not due
    after all, its `next_run_at` moved to when it is (a Result)."""
    data = snap.to_dict() or {}
    now = rt.clock.now()
    if data.get(RotationField.STATUS) != RotationStatus.ACTIVE:
        return Result.SKIPPED
    try:
        check_lease(data.get(LEASE))
        if data.get(LEASE):
            return Result.SKIPPED  # a claimed day, settled by reconciliation
        rotation = Rotation.from_document(snap.id, data)
    except DocumentError as exc:
        return reject_rotation(rt, kind, snap, exc)
    if not rotation.is_due(now):
        return _reschedule(rt, snap, rotation, now)
    today = rotation.today(now)
    turn = turn_for(rotation, today)
    ledger_ref = rt.db.collection(DELIVERIES).document(rotation_delivery_id(snap.id, today))
    missed = missed_day_records(rt, rotation, today, now)
    if turn.member is None:
        return _everyone_skipped(rt, snap, rotation, turn, ledger_ref, missed, now)
    return DayPlan(rt, rotation, turn, _rollback_of(data), ledger_ref, missed, now)


@dataclass(frozen=True)
class DayPlan:
    """The claim of one rotation day (processor.claim.ClaimPlan)."""

    rt: Runtime
    rotation: Rotation
    turn: Turn
    rollback: Rollback  # the fields a rollback restores, as they were before the claim
    ledger_ref: firestore.DocumentReference
    days: MissedDays
    planned_at: datetime

    @property
    def occurrence_at(self) -> datetime:
        return self.rotation.due_at(self.turn.day)

    @property
    def missed(self) -> Sequence[Missed]:
        return self.days.records

    def new_entry(self) -> dict[str, Any]:
        return day_entry(self.rotation, self.turn.day, self.rt.worker_id, LedgerWrite())

    def claim_fields(self) -> LedgerWrite:
        # Whose turn it is, and what the post is (rotations.kind.pinned_day). A plan is only
        # made for a day with a member (claim_day).
        member = self.turn.member
        pinned = LedgerWrite() if member is None else pinned_day(self.rotation, member)
        return replace(pinned, member=member)

    def claimed(
        self, owner: str, expires_at: datetime, attempts: int, missed: Sequence[Missed]
    ) -> RotationWrite:
        turn, day = self.turn, self.turn.day.isoformat()
        return RotationWrite(
            last_processed_date=day,
            cursor=turn.cursor,
            members=list(turn.members),
            rollback=self.rollback,
            lease=Lease(owner, expires_at, occurrence_date=day, member=turn.member),
            attempts=attempts,
            # The next turn: the due query stops returning a claimed day at once.
            next_run_at=self.rotation.next_due_at(self.planned_at, after=turn.day),
        )

    def repaired(
        self, entry: dict[str, Any], now: datetime, missed: Sequence[Missed]
    ) -> RotationWrite:
        """The day marked taken; a day another claim holds gets its lease back, as the claim
        left it (the order advanced, the values before it under `rollback`), so that
        reconciliation can settle it either way."""
        day = self.turn.day
        update = RotationWrite(
            last_processed_date=day.isoformat(),
            next_run_at=self.rotation.next_due_at(now, after=day),
        )
        if entry.get(LedgerField.STATUS) != LedgerStatus.CLAIMED:
            return update
        expires = entry.get(LedgerField.LEASE_EXPIRES_AT)
        lease = Lease(
            entry.get(LedgerField.WORKER),
            # Never a lease the expired-lease query cannot find.
            expires if isinstance(expires, datetime) else now,
            occurrence_date=day.isoformat(),
            member=entry.get(LedgerField.MEMBER),
        )
        held = turn_for(self.rotation, day)
        return replace(
            update,
            cursor=held.cursor,
            members=list(held.members),
            rollback=self.rollback,
            lease=lease,
        )

    def subject(self, entry: dict[str, Any] | None) -> DayTurn:
        assert self.turn.member is not None  # a claim is only planned for a turn with a member
        escalated = entry is not None and entry.get(LedgerField.ESCALATED_AT) is not None
        rollback = self.rollback.to_document()
        return DayTurn(self.rotation, self.turn.day, self.turn.member, rollback, escalated)

    def alongside(self, batch: firestore.WriteBatch) -> None:
        close_ended(batch, self.days)

    def log(self, missed: Sequence[Missed]) -> None:
        log_missed_days(self.rt, self.rotation, self.days, missed)

    def log_fields(self) -> dict[str, Any]:
        return {LedgerField.OCCURRENCE_DATE.value: self.turn.day.isoformat()}

    def landed(self, results: Sequence[Any]) -> None:
        pass  # nothing carried forward


def _rollback_of(data: dict[str, Any]) -> Rollback:
    return Rollback(
        data.get(RotationField.LAST_PROCESSED_DATE),
        data.get(RotationField.CURSOR, 0),
        data.get(RotationField.MEMBERS),
    )


def _reschedule(rt: Runtime, snap: Snapshot, rotation: Rotation, now: datetime) -> Result:
    """Found due but no turn is open now (today is not a turn day, its time has not come,
    or it was claimed): the next turn is when it is next looked at. Past days are settled
    on the way (missed ones recorded, released ones closed), as a claim would."""
    missed = missed_day_records(rt, rotation, rotation.today(now), now)
    batch = rt.db.batch()
    batch.update(
        snap.reference,
        RotationWrite(next_run_at=rotation.next_due_at(now), updated_at=now).to_document(),
        option=rt.db.write_option(last_update_time=snap.update_time),
    )
    create_missed(batch, missed)
    try:
        batch.commit()
    except (FailedPrecondition, AlreadyExists):
        return Result.DUPLICATE
    log_missed_days(rt, rotation, missed)
    return Result.SKIPPED


def _everyone_skipped(
    rt: Runtime,
    snap: Snapshot,
    rotation: Rotation,
    turn: Turn,
    ledger_ref: firestore.DocumentReference,
    missed: MissedDays,
    now: datetime,
) -> Result:
    """Every member is out today: the day is recorded `skipped` and nobody loses a turn."""
    update = (
        RotationWrite(
            last_processed_date=turn.day.isoformat(),
            next_run_at=rotation.next_due_at(now, after=turn.day),
        )
        .stamped(now)
        .to_document()
    )
    option = rt.db.write_option(last_update_time=snap.update_time)
    batch = rt.db.batch()
    batch.update(snap.reference, update, option=option)
    batch.create(
        ledger_ref,
        day_entry(
            rotation,
            turn.day,
            rt.worker_id,
            LedgerWrite(
                status=LedgerStatus.SKIPPED,
                reason=LedgerReason.EVERYONE_SKIPPED,
                skipped_at=now,
            ),
        ),
    )
    create_missed(batch, missed)
    try:
        try:
            batch.commit()  # pragma: SYNCPOINT skip
        except AlreadyExists:
            # An earlier attempt today was rolled back; its entry keeps its own story.
            batch = rt.db.batch()
            batch.update(snap.reference, update, option=option)
            create_missed(batch, missed)
            batch.commit()
    except (FailedPrecondition, AlreadyExists):
        return Result.DUPLICATE
    log_missed_days(rt, rotation, missed)
    logs.warning(
        "rotation day skipped: every member is out",
        rotation_id=rotation.id,
        delivery_id=ledger_ref.id,
        occurrence_date=turn.day.isoformat(),
        status=LedgerStatus.SKIPPED,
        error_code=LedgerReason.EVERYONE_SKIPPED,
        channel=rotation.channel,
    )
    return Result.SKIPPED


def reject_rotation(rt: Runtime, kind: Kind, snap: Snapshot, exc: DocumentError) -> Result:
    """A rotation that cannot take turns as stored is paused with a code saying why (and
    escalated), rather than tried again every minute; an edit can resume it."""
    detail = f"rotation cannot take turns as stored (paused): {exc.message}"
    return reject(rt, kind, snap, exc, status=RotationStatus.PAUSED, detail=detail)
