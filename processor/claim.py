"""Claiming one occurrence: after a claim exactly one worker owns its send.

Mechanism: one atomic batch commit holding (1) an update of the message with a
`last_update_time` precondition equal to the version we read, and (2) the `create()` of the
occurrence's ledger document, whose id is derived from (message, occurrence). Either both
land or neither does. A second worker fails the precondition (the message changed) or the
create (the occurrence was claimed before), without waiting on a lock. We measured the
alternative on the emulator: a read-modify-write transaction with four workers walking the
same documents in the same order took 146 s for 100 messages (lock waits); this commit took
0.7 s. No lock is ever held, so contention costs one failed RPC, not a wait.

A ledger entry that already exists is the truth about its occurrence: a released or failed
one is claimed again through the same document (attempts + 1), a delivered one is never sent
again, and a message document that disagrees with its ledger is repaired from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from google.api_core.exceptions import AlreadyExists, FailedPrecondition
from google.cloud import firestore

from core import logs
from core.errors import DocumentError
from core.models import LedgerStatus, Message, Status, message_delivery_id
from core.runtime import Runtime
from core.store import DELIVERIES, Snapshot
from processor.advance import after_occurrence
from processor.outcome import Result


@dataclass(frozen=True)
class Claim:
    message: Message
    occurrence_at: datetime
    delivery_id: str
    attempts: int
    owner: str
    expires_at: datetime
    # The update times our claim wrote: finalize is conditioned on them (the lease fence).
    message_version: Any
    ledger_version: Any


def occurrence_of(data: dict[str, Any]) -> datetime:
    """The occurrence a waiting message delivers next: `next_run_at`, unless a released
    attempt is being retried later (then `occurrence_at` keeps its identity)."""
    occurrence = data.get("occurrence_at") or data.get("next_run_at")
    if not isinstance(occurrence, datetime):
        raise DocumentError(
            "invalid_occurrence_at", f"occurrence_at {occurrence!r} is not a timestamp"
        )
    return occurrence


def claim_message(rt: Runtime, snap: Snapshot) -> Claim | Result:
    """Claim the occurrence `snap` (a waiting, due message as just read) is due for."""
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
    delivery_id = message_delivery_id(snap.id, occurrence)
    ledger_ref = rt.db.collection(DELIVERIES).document(delivery_id)
    expires_at = now + timedelta(seconds=rt.settings.lease_seconds)
    ledger_fields = {
        "status": LedgerStatus.CLAIMED,
        "claimed_at": now,
        "worker": rt.worker_id,
        "lease_expires_at": expires_at,
        "error": None,
    }
    batch = rt.db.batch()
    batch.update(
        snap.reference,
        _claimed_message(rt.worker_id, expires_at, occurrence, 1, now),
        option=rt.db.write_option(last_update_time=snap.update_time),
    )
    batch.create(
        ledger_ref,
        {
            "kind": "message",
            "message_id": snap.id,
            "occurrence_at": occurrence,
            "channel": message.channel,
            "attempts": 1,
            "slack_ts": None,
            "sent_at": None,
            **ledger_fields,
        },
    )
    try:
        results = batch.commit()  # pragma: SYNCPOINT claim
    except FailedPrecondition:
        return Result.DUPLICATE  # another worker (or an edit) changed it since our read
    except AlreadyExists:
        return _claim_existing(rt, snap, message, occurrence, ledger_ref, expires_at, now)
    return Claim(
        message,
        occurrence,
        delivery_id,
        1,
        rt.worker_id,
        expires_at,
        results[0].update_time,
        results[1].update_time,
    )


def _claimed_message(
    owner: str, expires_at: datetime, occurrence: datetime, attempts: int, now: datetime
) -> dict[str, Any]:
    return {
        "status": Status.SENDING,
        "lease": {"owner": owner, "expires_at": expires_at, "occurrence_at": occurrence},
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
) -> Claim | Result:
    ledger = ledger_ref.get()
    entry = ledger.to_dict() or {}
    status = entry.get("status")
    if status not in LedgerStatus.RECLAIMABLE:
        return _repair_from_ledger(rt, snap, message, occurrence, entry)
    attempts = int(entry.get("attempts") or 0) + 1
    batch = rt.db.batch()
    batch.update(
        snap.reference,
        _claimed_message(rt.worker_id, expires_at, occurrence, attempts, now),
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
        },
        option=rt.db.write_option(last_update_time=ledger.update_time),
    )
    try:
        results = batch.commit()  # pragma: SYNCPOINT reclaim
    except FailedPrecondition:
        return Result.DUPLICATE
    return Claim(
        message,
        occurrence,
        ledger_ref.id,
        attempts,
        rt.worker_id,
        expires_at,
        results[0].update_time,
        results[1].update_time,
    )


def _repair_from_ledger(
    rt: Runtime, snap: Snapshot, message: Message, occurrence: datetime, entry: dict[str, Any]
) -> Result:
    """The message waits for an occurrence its ledger already settled (or another worker
    holds): never send it again; bring the message in line with the ledger instead."""
    status = entry.get("status")
    now = rt.clock.now()
    if status == LedgerStatus.CLAIMED:
        update: dict[str, Any] = {
            "status": Status.SENDING,
            "lease": {
                "owner": entry.get("worker"),
                "expires_at": entry.get("lease_expires_at"),
                "occurrence_at": occurrence,
            },
        }
    elif status == LedgerStatus.UNCONFIRMED:
        update = {"status": Status.UNCONFIRMED}
    else:  # sent or skipped: that occurrence is done, move past it
        update = after_occurrence(message, occurrence)
    update |= {"updated_at": now, "version": firestore.Increment(1)}
    try:
        snap.reference.update(update, option=rt.db.write_option(last_update_time=snap.update_time))
    except FailedPrecondition:
        return Result.DUPLICATE
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
    tick goes on."""
    try:
        snap.reference.update(
            {
                "status": Status.FAILED,
                "last_error": {"code": exc.code, "message": exc.message, "at": now},
                "updated_at": now,
                "version": firestore.Increment(1),
            },
            option=rt.db.write_option(last_update_time=snap.update_time),
        )
    except FailedPrecondition:
        return Result.DUPLICATE
    logs.error(
        "message rejected: it cannot be sent as stored",
        message_id=snap.id,
        occurrence_at=(snap.to_dict() or {}).get("next_run_at"),
        status="failed",
        error_code=exc.code,
        error_message=exc.message,
    )
    return Result.FAILED
