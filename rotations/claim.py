"""Claiming a rotation's day: after a claim exactly one worker posts that day's turn.

The same mechanism as a message claim: one batch holding (1) the rotation's update,
preconditioned on the update time we read, and (2) the `create()` of the day's ledger
document `r:<rotation>:<local date>`. The update sets `last_processed_date` to today,
advances the order, keeps the previous values under `rollback`, and takes a `lease`; so a
second processor fails the precondition or the create and skips, and a day is never claimed
without a lease that reconciliation will settle.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from google.api_core.exceptions import AlreadyExists, FailedPrecondition
from google.cloud import firestore

from core import logs
from core.errors import DocumentError
from core.models import Lease, LedgerStatus, check_lease, rotation_delivery_id
from core.rotation import ACTIVE, Rotation, Turn, turn_for
from core.runtime import Runtime
from core.store import DELIVERIES, Snapshot
from processor.abc import Claim
from processor.channel_slots import Slot, slot_versions, take_slots
from processor.escalate import escalate
from processor.history_search import post_deadline
from processor.ledger_entries import new_day_entry
from processor.outcome import Result
from rotations.kind import ROTATION_DAY_KIND, DayTurn
from rotations.missed_days import MissedDays, create_missed, log_missed_days, missed_day_records


def claim_day(rt: Runtime, snap: Snapshot, slots: tuple[Slot, ...] = ()) -> Claim[DayTurn] | Result:
    """Claim today's turn of the rotation `snap` (found due); or, when it is not due after
    all, move its `next_run_at` to when it is. With `slots`, the claim takes the channel's
    pacing slots too, as a message's claim does."""
    data = snap.to_dict() or {}
    now = rt.clock.now()
    if data.get("status") != ACTIVE:
        return Result.SKIPPED
    try:
        check_lease(data.get("lease"))
        if data.get("lease"):
            return Result.SKIPPED  # a claimed day, settled by reconciliation
        rotation = Rotation.from_document(snap.id, data)
    except DocumentError as exc:
        return reject_rotation(rt, snap, exc, now)
    if not rotation.is_due(now):
        return _reschedule(rt, snap, rotation, now)
    today = rotation.today(now)
    turn = turn_for(rotation, today)
    ledger_ref = rt.db.collection(DELIVERIES).document(rotation_delivery_id(snap.id, today))
    missed = missed_day_records(rt, rotation, today, now)
    if turn.member is None:
        return _everyone_skipped(rt, snap, rotation, turn, ledger_ref, missed, now)
    try:
        return _claim(rt, snap, rotation, turn, ledger_ref, data, missed, now, slots)
    except AlreadyExists:
        return _claim_existing(rt, snap, rotation, turn, ledger_ref, data, missed, now, slots)


def _claim(
    rt: Runtime,
    snap: Snapshot,
    rotation: Rotation,
    turn: Turn,
    ledger_ref: firestore.DocumentReference,
    data: dict[str, Any],
    missed: MissedDays,
    now: datetime,
    slots: tuple[Slot, ...],
) -> Claim[DayTurn] | Result:
    expires_at = now + timedelta(seconds=rt.settings.lease_seconds)
    due_at = rotation.due_at(turn.day)
    batch = rt.db.batch()
    rollback = _rollback_of(data)
    batch.update(
        snap.reference,
        _claimed_rotation(rt, rotation, turn, rollback, expires_at, 1, now),
        option=rt.db.write_option(last_update_time=snap.update_time),
    )
    batch.create(
        ledger_ref,
        new_day_entry(
            rotation,
            turn.day,
            rt.worker_id,
            member=turn.member,
            status=LedgerStatus.CLAIMED,
            attempts=1,
            claimed_at=now,
            lease_expires_at=expires_at,
            late_seconds=max(0.0, (now - due_at).total_seconds()),
        ),
    )
    take_slots(rt.db, batch, slots, rt.worker_id, now)
    create_missed(batch, missed)
    try:
        results = batch.commit()  # pragma: SYNCPOINT claim
    except FailedPrecondition:
        return Result.DUPLICATE  # another processor (or an edit) changed it since our read
    log_missed_days(rt, rotation, missed)
    turn_claimed = DayTurn(rotation, turn.day, _member(turn), rollback)
    return _day_claim(rt, turn_claimed, ledger_ref.id, 1, results, slots, now)


def _claim_existing(
    rt: Runtime,
    snap: Snapshot,
    rotation: Rotation,
    turn: Turn,
    ledger_ref: firestore.DocumentReference,
    data: dict[str, Any],
    missed: MissedDays,
    now: datetime,
    slots: tuple[Slot, ...],
) -> Claim[DayTurn] | Result:
    """Today has a ledger entry already. A rolled-back day (failed, or released for a retry)
    is claimed again through it; any other entry is the truth about today: nothing is sent,
    and the rotation is brought in line with it."""
    ledger = ledger_ref.get()
    if not ledger.exists:
        # A missed day's entry appeared meanwhile (another claim's), or the channel's
        # pacing slot did: another worker posted to the channel this minute.
        return Result.DUPLICATE
    entry = ledger.to_dict() or {}
    if entry.get("status") not in LedgerStatus.RECLAIMABLE:
        return _repair_from_ledger(rt, snap, rotation, turn.day, entry, now)
    attempts = int(entry.get("attempts") or 0) + 1
    expires_at = now + timedelta(seconds=rt.settings.lease_seconds)
    rollback = _rollback_of(data)
    batch = rt.db.batch()
    batch.update(
        snap.reference,
        _claimed_rotation(rt, rotation, turn, rollback, expires_at, attempts, now),
        option=rt.db.write_option(last_update_time=snap.update_time),
    )
    batch.update(
        ledger_ref,
        {
            "status": LedgerStatus.CLAIMED,
            "member": turn.member,
            "worker": rt.worker_id,
            "attempts": attempts,
            "claimed_at": now,
            "lease_expires_at": expires_at,
            "search": firestore.DELETE_FIELD,  # a new attempt, a new window
        },
        option=rt.db.write_option(last_update_time=ledger.update_time),
    )
    take_slots(rt.db, batch, slots, rt.worker_id, now)
    create_missed(batch, missed)
    try:
        results = batch.commit()  # pragma: SYNCPOINT reclaim
    except (FailedPrecondition, AlreadyExists):
        return Result.DUPLICATE
    log_missed_days(rt, rotation, missed)
    escalated = entry.get("escalated_at") is not None
    turn_claimed = DayTurn(rotation, turn.day, _member(turn), rollback, escalated)
    return _day_claim(rt, turn_claimed, ledger_ref.id, attempts, results, slots, now)


def _day_claim(
    rt: Runtime,
    turn: DayTurn,
    delivery_id: str,
    attempts: int,
    results: list[Any],
    slots: tuple[Slot, ...],
    now: datetime,
) -> Claim[DayTurn]:
    return Claim(
        ROTATION_DAY_KIND,
        turn,
        turn.rotation.id,
        turn.rotation.due_at(turn.day),
        delivery_id,
        attempts,
        rt.worker_id,
        results[0].update_time,
        results[1].update_time,
        slot_versions(results, slots),
        post_deadline(rt.settings, now),
    )


def _member(turn: Turn) -> str:
    assert turn.member is not None  # a claim is only made for a turn with a member
    return turn.member


def _rollback_of(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "last_processed_date": data.get("last_processed_date"),
        "cursor": data.get("cursor", 0),
        "members": data.get("members"),
    }


def _claimed_rotation(
    rt: Runtime,
    rotation: Rotation,
    turn: Turn,
    rollback: dict[str, Any],
    expires_at: datetime,
    attempts: int,
    now: datetime,
) -> dict[str, Any]:
    return {
        "last_processed_date": turn.day.isoformat(),
        "cursor": turn.cursor,
        "members": list(turn.members),
        "rollback": rollback,
        "lease": Lease(
            rt.worker_id, expires_at, occurrence_date=turn.day.isoformat(), member=turn.member
        ).to_document(),
        "attempts": attempts,
        # The next turn: the due query stops returning a claimed day at once.
        "next_run_at": rotation.next_due_at(now, after=turn.day),
        "updated_at": now,
        "version": firestore.Increment(1),
    }


def _reschedule(rt: Runtime, snap: Snapshot, rotation: Rotation, now: datetime) -> Result:
    """Found due but no turn is open now (today is not a turn day, its time has not come,
    or it was claimed): the next turn is when it is next looked at. Past days are settled
    on the way (missed ones recorded, released ones closed), as a claim would."""
    missed = missed_day_records(rt, rotation, rotation.today(now), now)
    batch = rt.db.batch()
    batch.update(
        snap.reference,
        {"next_run_at": rotation.next_due_at(now), "updated_at": now},
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
    update = {
        "last_processed_date": turn.day.isoformat(),
        "next_run_at": rotation.next_due_at(now, after=turn.day),
        "updated_at": now,
        "version": firestore.Increment(1),
    }
    option = rt.db.write_option(last_update_time=snap.update_time)
    batch = rt.db.batch()
    batch.update(snap.reference, update, option=option)
    batch.create(
        ledger_ref,
        new_day_entry(
            rotation,
            turn.day,
            rt.worker_id,
            status=LedgerStatus.SKIPPED,
            reason="everyone_skipped",
            skipped_at=now,
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
        status="skipped",
        error_code="everyone_skipped",
        channel=rotation.channel,
    )
    return Result.SKIPPED


def _repair_from_ledger(
    rt: Runtime,
    snap: Snapshot,
    rotation: Rotation,
    day: date,
    entry: dict[str, Any],
    now: datetime,
) -> Result:
    """The rotation says today is open but its ledger settled (or holds) it: never post it
    again; mark the day taken, and give a held claim its lease back for reconciliation,
    as the claim left it (the order advanced, the values before it under `rollback`), so
    that reconciliation can settle it either way."""
    update: dict[str, Any] = {
        "last_processed_date": day.isoformat(),
        "next_run_at": rotation.next_due_at(now, after=day),
        "updated_at": now,
        "version": firestore.Increment(1),
    }
    if entry.get("status") == LedgerStatus.CLAIMED:
        turn = turn_for(rotation, day)
        expires = entry.get("lease_expires_at")
        update |= {
            "cursor": turn.cursor,
            "members": list(turn.members),
            "rollback": _rollback_of(snap.to_dict() or {}),
            "lease": Lease(
                entry.get("worker"),
                # Never a lease the expired-lease query cannot find.
                expires if isinstance(expires, datetime) else now,
                occurrence_date=day.isoformat(),
                member=entry.get("member"),
            ).to_document(),
        }
    try:
        snap.reference.update(update, option=rt.db.write_option(last_update_time=snap.update_time))
    except FailedPrecondition:
        return Result.DUPLICATE
    logs.warning(
        "rotation disagreed with its ledger; repaired from the ledger, nothing sent",
        rotation_id=rotation.id,
        occurrence_date=day.isoformat(),
        ledger_status=entry.get("status"),
        status="duplicate",
    )
    return Result.DUPLICATE


def reject_rotation(rt: Runtime, snap: Snapshot, exc: DocumentError, now: datetime) -> Result:
    """A rotation that cannot take turns as stored is paused with a code saying why (and
    escalated), rather than tried again every minute. It holds no claim (one with a usable
    lease is never rejected), so a `lease` no worker can hold goes too, and an edit can
    resume it."""
    try:
        snap.reference.update(
            {
                "status": "paused",
                "last_error": {"code": exc.code, "message": exc.message, "at": now},
                "lease": firestore.DELETE_FIELD,
                "updated_at": now,
                "version": firestore.Increment(1),
            },
            option=rt.db.write_option(last_update_time=snap.update_time),
        )
    except FailedPrecondition:
        return Result.DUPLICATE
    escalate(
        rt,
        status="failed",
        rotation_id=snap.id,
        occurrence_at=None,
        error_code=exc.code,
        detail=f"rotation cannot take turns as stored (paused): {exc.message}",
    )
    return Result.FAILED
