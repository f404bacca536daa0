"""Planning the claim of an event's one send (processor.claim commits it).

The first claim is the request's own (`POST /events`, events.notify): it creates the event
and its ledger entry `deliveries/e:<sha256 of key>` in one batch, so the first caller owns
the send and every other caller's create fails. A later claim is a retry of a released send
(rate limited, or proven absent by reconciliation), made by a pass through the same ledger
entry; the event then names the DM its first claim opened, so nothing is opened again.

An event to a person with a `category` passes their gates (processor.gates) in every claim,
as a scheduled message does: held back, it ends `skipped` with the reason and nothing is
posted; passed, its claim reserves what the gates count (the daily cap counts an event on
its UTC day) in the claim's own batch, and its outcome records or gives that back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from typing import Any

from google.api_core.exceptions import AlreadyExists, FailedPrecondition
from google.cloud import firestore

from core import logs
from core.documents.deliveries import (
    LedgerField,
    LedgerKind,
    LedgerReason,
    LedgerStatus,
    LedgerWrite,
    Occurrence,
    entry_lease,
    new_entry,
)
from core.documents.events import EventField, EventStatus, EventWrite
from core.documents.leases import Lease
from core.documents.write import DELETE, UNSET
from core.errors import DocumentError
from core.event import Event
from core.models import event_delivery_id
from core.named_batch import Landed, NamedBatch
from core.runtime import Runtime
from core.store import DELIVERIES, Snapshot
from processor.abc import Kind, Missed, Settlement
from processor.claim import reclaimable
from processor.gates import (
    Gates,
    Reservation,
    gated,
    held_back,
    read_gates,
    reservation,
    under_version,
)
from processor.outcome import Result
from processor.reject import reject

# What a settled ledger entry makes of its event when the two disagree (a repair).
_SETTLED: dict[str, EventStatus] = {
    LedgerStatus.SENT: EventStatus.SENT,
    LedgerStatus.UNCONFIRMED: EventStatus.UNCONFIRMED,
    LedgerStatus.SKIPPED: EventStatus.SKIPPED,
}


def plan_retry(
    rt: Runtime, kind: Kind, snap: Snapshot, ahead: Gates | None = None
) -> EventPlan | Settlement | Result:
    """The claim of a released event that is due again; or what settles it instead (it
    cannot be sent as stored, or the person's gates hold it back on this retry); a Result
    when it is not due after all. It writes nothing. `ahead`: the pass's read of the gates
    (None: read here)."""
    data = snap.to_dict() or {}
    due = data.get(EventField.NEXT_RUN_AT)
    waiting = data.get(EventField.STATUS) == EventStatus.PENDING
    if not waiting or not isinstance(due, datetime) or due > rt.clock.now():
        return Result.SKIPPED  # claimed or settled since it was found due
    try:
        event = Event.from_document(snap.id, data)
    except DocumentError as exc:
        return Settlement(partial(_reject_retry, kind=kind, snap=snap, exc=exc))
    plan = EventPlan.of(rt, event)
    if not gated(event):
        return plan
    gates = ahead if ahead is not None and ahead.covers(event) else None
    try:
        passed = passed_gates(plan, gates or read_gates(rt.db, [event]), rt.clock.now())
    except DocumentError as exc:  # its category cannot be read: its gates are unknown
        return Settlement(partial(_reject_retry, kind=kind, snap=snap, exc=exc))
    if isinstance(passed, HeldBack):
        return Settlement(partial(_skip_retry, kind=kind, snap=snap, held=passed))
    return passed


def _reject_retry(rt: Runtime, kind: Kind, snap: Snapshot, exc: DocumentError) -> Result:
    """A released event that cannot be sent as stored ends `failed` with its ledger entry,
    under the entry's version (read here: still `released` and due), as its skip does. One
    with no entry (stored straight into Firestore, which the contract does not allow) ends
    `failed` under its own version."""
    entry = rt.db.collection(DELIVERIES).document(event_delivery_id(snap.id)).get()
    if entry.exists and not reclaimable(kind, entry.to_dict() or {}, rt.clock.now()):
        return Result.DUPLICATE  # claimed, settled or released again since it was read
    detail = f"cannot be sent as stored: {exc.message}"
    fence = entry if entry.exists else None
    return reject(rt, kind, snap, exc, status=EventStatus.FAILED, detail=detail, entry=fence)


@dataclass(frozen=True)
class HeldBack:
    """An event a gate held back: the reason, and its plan carrying the person's version the
    gates decided on (`reservation`, no fields), which the skip is committed under."""

    reason: LedgerReason
    plan: EventPlan


def passed_gates(plan: EventPlan, gates: Gates, now: datetime) -> EventPlan | HeldBack:
    """The plan with what its claim reserves, or the gate that holds the event back."""
    event, delivery_id = plan.event, plan.ledger_ref.id
    docs = gates.docs(event)
    reason = held_back(event, event.created_at, delivery_id, docs, now)
    if reason is not None:
        person = under_version(gates, event, docs, delivery_id)
        return HeldBack(LedgerReason(reason), replace(plan, reservation=person))
    holds, held = reservation(gates, event, docs, event.created_at, delivery_id, now)
    return replace(plan, event=replace(event, holds=holds), reservation=held)


def _skip_retry(rt: Runtime, kind: Kind, snap: Snapshot, held: HeldBack) -> Result:
    """A released event held back on its retry: the event and its entry end `skipped`, in one
    batch under the versions of its ledger entry (read here: still `released` and due) and of
    the person's document as the gates read it; either moved (another pass's claim or skip,
    an operator's settle, an opt-in): nothing is written, and the next pass plans it again.
    The event itself is its entry's to fence (processor.claim.reclaimable): a duplicate
    caller counting itself on it never fails the skip."""
    now = rt.clock.now()
    plan = held.plan
    ledger = plan.ledger_ref.get()
    if not reclaimable(kind, ledger.to_dict() or {}, now):
        return Result.DUPLICATE
    batch = NamedBatch(rt.db)
    skipped = EventWrite(status=EventStatus.SKIPPED, next_run_at=DELETE).stamped(now)
    batch.update(snap.reference, skipped.to_document())
    entry = LedgerWrite(status=LedgerStatus.SKIPPED, reason=held.reason, skipped_at=now)
    option = rt.db.write_option(last_update_time=ledger.update_time)
    batch.update(plan.ledger_ref, entry.to_document(), option=option)
    plan.alongside(batch)
    try:
        landed = batch.commit()  # pragma: SYNCPOINT event_retry_skip
    except (FailedPrecondition, AlreadyExists):
        return Result.DUPLICATE
    plan.landed(landed)
    log_skipped(plan.event, plan.ledger_ref.id, held.reason)
    return Result.SKIPPED


def log_skipped(event: Event, delivery_id: str, reason: LedgerReason) -> None:
    logs.info(
        "event held back by a gate; not sent",
        event_id=event.id,
        event_key=event.key,
        delivery_id=delivery_id,
        user=event.user,
        category=event.category,
        reason=reason.value,
        status=LedgerStatus.SKIPPED.value,
    )


@dataclass(frozen=True)
class EventPlan:
    """The claim of an event's send (processor.abc.ClaimPlan). Its occurrence is the instant
    the event was first claimed: one event, one occurrence."""

    event: Event
    ledger_ref: firestore.DocumentReference
    worker_id: str
    missed: Sequence[Missed] = ()
    reservation: Reservation | None = None  # the person's gates' (processor.gates.reserve)

    @classmethod
    def of(cls, rt: Runtime, event: Event) -> EventPlan:
        ref = rt.db.collection(DELIVERIES).document(event_delivery_id(event.id))
        return cls(event, ref, rt.worker_id)

    @property
    def occurrence_at(self) -> datetime:
        return self.event.created_at

    def new_entry(self) -> dict[str, Any]:
        event = self.event
        identity = Occurrence(
            LedgerKind.EVENT,
            LedgerField.EVENT_ID,
            event.id,
            event.created_at,
            event.channel,
            user=event.user,
            platform=event.platform,
        )
        return new_entry(identity, self.worker_id, LedgerWrite())

    def claim_fields(self) -> LedgerWrite:
        holds = self.event.holds  # what it reserved, for its finalize or reconciliation
        return LedgerWrite(gates=holds.to_document() if holds else UNSET)

    def claimed(
        self, owner: str, expires_at: datetime, attempts: int, missed: Sequence[Missed]
    ) -> EventWrite:
        lease = Lease(owner, expires_at, self.event.created_at)
        return EventWrite(status=EventStatus.SENDING, lease=lease, attempts=attempts)

    def repaired(
        self, entry: dict[str, Any], now: datetime, missed: Sequence[Missed]
    ) -> EventWrite:
        status = entry.get(LedgerField.STATUS)
        if status == LedgerStatus.CLAIMED:
            lease = entry_lease(entry, self.event.created_at)
            return EventWrite(status=EventStatus.SENDING, lease=lease)
        return EventWrite(status=_SETTLED.get(str(status), EventStatus.FAILED))

    def subject(self, entry: dict[str, Any] | None) -> Event:
        return self.event

    def alongside(self, batch: NamedBatch) -> None:
        if self.reservation is not None:  # last in the batch (see landed)
            self.reservation.write(batch)

    def log(self, missed: Sequence[Missed]) -> None:
        pass

    def log_fields(self) -> dict[str, Any]:
        return {LedgerField.OCCURRENCE_AT.value: self.event.created_at}

    def landed(self, landed: Landed) -> None:
        if self.reservation is not None:
            self.reservation.landed(landed)
