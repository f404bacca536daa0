"""Claiming one occurrence: after a claim exactly one worker owns its send.

Mechanism: one atomic batch commit holding (1) an update of the message with a
`last_update_time` precondition equal to the version we read, and (2) the `create()` of the
occurrence's ledger document, whose id is derived from (message, occurrence). Either both
land or neither does. A second worker fails the precondition (the message changed) or the
create (the occurrence was claimed before), without waiting on a lock. The core issue's
measurement on this machine's emulator (not repeated here): a read-modify-write transaction
with four workers walking the same documents in the same order took 146 s for 100 messages
(lock waits); this commit took 0.7 s. No lock is ever held, so contention costs one failed
RPC, not a wait.

A ledger entry that already exists is the truth about its occurrence: a released or failed
one is claimed again through the same document (attempts + 1), a delivered one is never sent
again, and a message document that disagrees with its ledger is repaired from it.

Time policy at claim (see core.schedule.catch_up): a series that was down claims only its
most recent due occurrence, if it is within `misfire_grace_seconds`; the older ones are
recorded `skipped` in the same batch (messages.missed). A one-off past its `expires_at`
ends `failed` (code `expired`).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from google.api_core.exceptions import AlreadyExists, FailedPrecondition
from google.cloud import firestore

from core import logs
from core.errors import DocumentError
from core.models import (
    Lease,
    LedgerStatus,
    Message,
    Status,
    check_instant,
    message_delivery_id,
)
from core.runtime import Runtime
from core.schedule import catch_up
from core.store import DELIVERIES, Snapshot
from messages.advance import after_occurrence, anchor_field
from messages.kind import MESSAGE_KIND
from messages.missed import (
    Record,
    counted,
    create_all,
    log_missed,
    missed_records,
    skip_missed,
)
from processor.abc import Claim
from processor.channel_slots import Slot, slot_versions, take_slots
from processor.escalate import escalate
from processor.history_search import post_deadline
from processor.ledger_entries import existing_ids, new_ledger_entry
from processor.outcome import Result


def occurrence_of(data: dict[str, Any]) -> datetime:
    """The occurrence a waiting message delivers next: `next_run_at`, unless a released
    attempt is being retried later (then `occurrence_at` keeps its identity)."""
    return check_instant(data.get("occurrence_at") or data.get("next_run_at"), "occurrence_at")


def planned_occurrence(message: Message, data: dict[str, Any], now: datetime) -> datetime | None:
    """The occurrence a claim at `now` would deliver, None when it would send nothing (a
    one-off past `expires_at`, or a series whose due occurrences are all past their grace).
    What a dry run should preview."""
    if message.expired(now):
        return None
    occurrence = occurrence_of(data)
    if message.recurrence is None or data.get("occurrence_at") is not None:
        return occurrence
    return catch_up(message.recurrence, occurrence, now, message.misfire_grace_seconds).send


def claim_message(
    rt: Runtime, snap: Snapshot, slots: tuple[Slot, ...] = ()
) -> Claim[Message] | Result:
    """Claim the occurrence `snap` (a waiting, due message as just read) is due for; with
    `slots`, take the channel's pacing slots in the same batch (processor.channel_slots)."""
    data = snap.to_dict() or {}
    now = rt.clock.now()
    due = data.get("next_run_at")
    if data.get("status") not in Status.WAITING or not isinstance(due, datetime) or due > now:
        return Result.SKIPPED  # claimed, settled or edited since it was found due
    if data.get("deleted"):
        return _retire_deleted(rt, snap, now)
    try:
        message = Message.from_document(snap.id, data)
        occurrence = occurrence_of(data)
    except DocumentError as exc:
        return reject_document(rt, snap, exc, now)
    if message.expired(now):
        return _expire(rt, snap, message, occurrence, now)
    missed: list[Record] = []
    try:  # evaluating the rule is bounded by work, and fails the document past it
        # The search restarts near the due occurrence; the claim stores where (and the
        # finalize goes on from there).
        message = message.reanchored(occurrence)
        plan = None
        if message.recurrence is not None and data.get("occurrence_at") is None:
            # (A released retry keeps its occurrence: it was due in time, not a misfire.)
            plan = catch_up(message.recurrence, occurrence, now, message.misfire_grace_seconds)
    except DocumentError as exc:
        return reject_document(rt, snap, exc, now)
    if plan is not None:
        missed = missed_records(rt, message, plan, now)
        if plan.send is None:
            return skip_missed(rt, snap, message, plan, missed, now)
        occurrence = plan.send
    return _claim(rt, snap, message, occurrence, missed, now, slots)


def _claim(
    rt: Runtime,
    snap: Snapshot,
    message: Message,
    occurrence: datetime,
    missed: list[Record],
    now: datetime,
    slots: tuple[Slot, ...],
) -> Claim[Message] | Result:
    delivery_id = message_delivery_id(snap.id, occurrence)
    ledger_ref = rt.db.collection(DELIVERIES).document(delivery_id)
    expires_at = now + timedelta(seconds=rt.settings.lease_seconds)
    ledger_fields = {
        "status": LedgerStatus.CLAIMED,
        "claimed_at": now,
        "worker": rt.worker_id,
        "lease_expires_at": expires_at,
        "late_seconds": _late_seconds(occurrence, now),
        "error": None,
    }
    # A second pass only after dropping missed records that exist already (see below).
    for _ in range(2):
        batch = rt.db.batch()
        batch.update(
            snap.reference,
            _claimed_message(rt.worker_id, expires_at, occurrence, 1, now)
            | counted(missed)
            | anchor_field(message),
            option=rt.db.write_option(last_update_time=snap.update_time),
        )
        batch.create(
            ledger_ref,
            new_ledger_entry(message, occurrence, rt.worker_id, attempts=1, **ledger_fields),
        )
        take_slots(rt.db, batch, slots, rt.worker_id, now)
        create_all(batch, missed)
        try:
            results = batch.commit()  # pragma: SYNCPOINT claim
        except FailedPrecondition:
            return Result.DUPLICATE  # another worker (or an edit) changed it since our read
        except AlreadyExists:
            # Our message precondition held, so no worker recorded these in a claim of this
            # version: an existing entry is older history (the occurrence was settled
            # before), and it stays as it is.
            existing = existing_ids(rt, [ledger_ref, *(r.ref for r in missed)])
            if ledger_ref.id in existing:
                missed = [r for r in missed if r.ref.id not in existing]
                return _claim_existing(
                    rt, snap, message, occurrence, ledger_ref, expires_at, now, missed, slots
                )
            if not existing.intersection(r.ref.id for r in missed):
                return Result.DUPLICATE  # the channel's slot: another worker took it
            missed = [r for r in missed if r.ref.id not in existing]
            continue
        log_missed(message, missed)
        return _claimed(rt, message, occurrence, delivery_id, 1, results, slots, now)
    return Result.DUPLICATE


def _late_seconds(occurrence: datetime, now: datetime) -> float:
    return max(0.0, (now - occurrence).total_seconds())


def _expire(
    rt: Runtime, snap: Snapshot, message: Message, occurrence: datetime, now: datetime
) -> Result:
    """A one-off past its `expires_at` is never sent: it ends `failed` (code `expired`) and
    its ledger entry says so, so the deliveries listing shows why nothing was posted."""
    error = {
        "code": "expired",
        "message": f"not sent: expires_at {message.expires_at} passed first",
        "at": now,
    }
    batch = rt.db.batch()
    batch.update(
        snap.reference,
        {
            "status": Status.FAILED,
            "last_error": error,
            "lease": firestore.DELETE_FIELD,
            "occurrence_at": firestore.DELETE_FIELD,
            "updated_at": now,
            "version": firestore.Increment(1),
        },
        option=rt.db.write_option(last_update_time=snap.update_time),
    )
    ledger_ref = rt.db.collection(DELIVERIES).document(message_delivery_id(snap.id, occurrence))
    ledger = ledger_ref.get()
    entry = ledger.to_dict() or {}
    if not ledger.exists:
        batch.create(
            ledger_ref,
            new_ledger_entry(
                message, occurrence, rt.worker_id, status=LedgerStatus.FAILED, error=error
            ),
        )
    elif entry.get("status") in LedgerStatus.RECLAIMABLE:
        batch.update(
            ledger_ref,
            {"status": LedgerStatus.FAILED, "error": error},
            option=rt.db.write_option(last_update_time=ledger.update_time),
        )
    else:  # sent, claimed or unconfirmed: that is the truth, not the expiry
        return _repair_from_ledger(rt, snap, message, occurrence, entry)
    try:
        batch.commit()  # pragma: SYNCPOINT expire
    except (FailedPrecondition, AlreadyExists):
        return Result.DUPLICATE
    escalate(
        rt,
        status="failed",
        message_id=snap.id,
        occurrence_at=occurrence,
        error_code="expired",
        detail=str(error["message"]),
        delivery_id=ledger_ref.id,
        channel=message.channel,
    )
    return Result.FAILED


def _claimed_message(
    owner: str, expires_at: datetime, occurrence: datetime, attempts: int, now: datetime
) -> dict[str, Any]:
    return {
        "status": Status.SENDING,
        "lease": Lease(owner, expires_at, occurrence).to_document(),
        "attempts": attempts,
        "updated_at": now,
        "version": firestore.Increment(1),
    }


def _claim_existing(
    rt: Runtime,
    snap: Snapshot,
    message: Message,
    occurrence: datetime,
    ledger_ref: firestore.DocumentReference,
    expires_at: datetime,
    now: datetime,
    missed: list[Record] | None = None,
    slots: tuple[Slot, ...] = (),
) -> Claim[Message] | Result:
    missed = missed or []
    ledger = ledger_ref.get()
    entry = ledger.to_dict() or {}
    status = entry.get("status")
    if status not in LedgerStatus.RECLAIMABLE:
        return _repair_from_ledger(rt, snap, message, occurrence, entry, missed)
    attempts = int(entry.get("attempts") or 0) + 1
    batch = rt.db.batch()
    batch.update(
        snap.reference,
        _claimed_message(rt.worker_id, expires_at, occurrence, attempts, now)
        | counted(missed)
        | anchor_field(message),
        option=rt.db.write_option(last_update_time=snap.update_time),
    )
    batch.update(
        ledger_ref,
        {
            "status": LedgerStatus.CLAIMED,
            "claimed_at": now,
            "worker": rt.worker_id,
            "lease_expires_at": expires_at,
            "attempts": attempts,
            "late_seconds": _late_seconds(occurrence, now),
            "search": firestore.DELETE_FIELD,  # a new attempt, a new window
        },
        option=rt.db.write_option(last_update_time=ledger.update_time),
    )
    take_slots(rt.db, batch, slots, rt.worker_id, now)
    create_all(batch, missed)
    try:
        results = batch.commit()  # pragma: SYNCPOINT reclaim
    except (FailedPrecondition, AlreadyExists):
        return Result.DUPLICATE
    log_missed(message, missed)
    return _claimed(rt, message, occurrence, ledger_ref.id, attempts, results, slots, now)


def _claimed(
    rt: Runtime,
    message: Message,
    occurrence: datetime,
    delivery_id: str,
    attempts: int,
    results: list[Any],
    slots: tuple[Slot, ...],
    now: datetime,
) -> Claim[Message]:
    """This worker's claim, fenced on the update times its batch left."""
    return Claim(
        MESSAGE_KIND,
        message,
        message.id,
        occurrence,
        delivery_id,
        attempts,
        rt.worker_id,
        results[0].update_time,
        results[1].update_time,
        slot_versions(results, slots),
        post_deadline(rt.settings, now),
    )


def _repair_from_ledger(
    rt: Runtime,
    snap: Snapshot,
    message: Message,
    occurrence: datetime,
    entry: dict[str, Any],
    missed: list[Record] | None = None,
) -> Result:
    """The message waits for an occurrence its ledger already settled (or another worker
    holds): never send it again; bring the message in line with the ledger instead."""
    status = entry.get("status")
    now = rt.clock.now()
    if status == LedgerStatus.CLAIMED:
        update: dict[str, Any] = {
            "status": Status.SENDING,
            "lease": Lease(
                entry.get("worker"), entry.get("lease_expires_at"), occurrence
            ).to_document(),
        }
    elif status == LedgerStatus.UNCONFIRMED:
        update = {"status": Status.UNCONFIRMED}
    else:  # sent or skipped: that occurrence is done, move past it
        update = after_occurrence(message, occurrence)
    missed = missed or []
    update |= {"updated_at": now, "version": firestore.Increment(1)} | counted(missed)
    batch = rt.db.batch()
    batch.update(
        snap.reference, update, option=rt.db.write_option(last_update_time=snap.update_time)
    )
    create_all(batch, missed)  # the older missed occurrences are settled all the same
    try:
        batch.commit()
    except (FailedPrecondition, AlreadyExists):
        return Result.DUPLICATE
    log_missed(message, missed)
    logs.warning(
        "message disagreed with its ledger; repaired from the ledger, nothing sent",
        message_id=snap.id,
        occurrence_at=occurrence,
        ledger_status=status,
        status="duplicate",
    )
    return Result.DUPLICATE


def _retire_deleted(rt: Runtime, snap: Snapshot, now: datetime) -> Result:
    """A soft-deleted message is never sent; cancelling it keeps it out of later due
    queries instead of being skipped on every tick."""
    try:
        snap.reference.update(
            {"status": Status.CANCELLED, "updated_at": now, "version": firestore.Increment(1)},
            option=rt.db.write_option(last_update_time=snap.update_time),
        )
    except FailedPrecondition:
        return Result.DUPLICATE
    return Result.SKIPPED


def reject_document(rt: Runtime, snap: Snapshot, exc: DocumentError, now: datetime) -> Result:
    """A document that cannot be sent as it is ends `failed` with a code saying why; the
    tick goes on. It holds no claim (only a waiting message, or one whose lease no worker
    can hold, is rejected), so a stale `lease` goes too."""
    try:
        snap.reference.update(
            {
                "status": Status.FAILED,
                "last_error": {"code": exc.code, "message": exc.message, "at": now},
                "lease": firestore.DELETE_FIELD,
                "updated_at": now,
                "version": firestore.Increment(1),
            },
            option=rt.db.write_option(last_update_time=snap.update_time),
        )
    except FailedPrecondition:
        return Result.DUPLICATE
    due = (snap.to_dict() or {}).get("next_run_at")
    escalate(
        rt,
        status="failed",
        message_id=snap.id,
        occurrence_at=due if isinstance(due, datetime) else None,
        error_code=exc.code,
        detail=f"cannot be sent as stored: {exc.message}",
    )
    return Result.FAILED
