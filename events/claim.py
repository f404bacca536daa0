"""Planning the claim of an event's one send (processor.claim commits it).

The first claim is the request's own (`POST /events`, events.notify): it creates the event
and its ledger entry `deliveries/e:<sha256 of key>` in one batch, so the first caller owns
the send and every other caller's create fails. A later claim is a retry of a released send
(rate limited, or proven absent by reconciliation), made by a pass through the same ledger
entry; the event then names the DM its first claim opened, so nothing is opened again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from google.cloud import firestore

from core.documents.deliveries import (
    LedgerField,
    LedgerKind,
    LedgerStatus,
    LedgerWrite,
    Occurrence,
    new_entry,
)
from core.documents.events import EventField, EventStatus, EventWrite
from core.documents.leases import Lease
from core.errors import DocumentError
from core.models import event_delivery_id
from core.runtime import Runtime
from core.store import DELIVERIES, Snapshot
from events.model import Event
from processor.abc import Kind, Missed
from processor.outcome import Result
from processor.reject import reject

# What a settled ledger entry makes of its event when the two disagree (a repair).
_SETTLED: dict[str, EventStatus] = {
    LedgerStatus.SENT: EventStatus.SENT,
    LedgerStatus.UNCONFIRMED: EventStatus.UNCONFIRMED,
    LedgerStatus.SKIPPED: EventStatus.FAILED,
}


def plan_retry(rt: Runtime, kind: Kind[Event], snap: Snapshot) -> EventPlan | Result:
    """The claim of a released event that is due again; a Result when there is none."""
    data = snap.to_dict() or {}
    due = data.get(EventField.NEXT_RUN_AT)
    waiting = data.get(EventField.STATUS) == EventStatus.PENDING
    if not waiting or not isinstance(due, datetime) or due > rt.clock.now():
        return Result.SKIPPED  # claimed or settled since it was found due
    try:
        event = Event.from_document(snap.id, data)
    except DocumentError as exc:
        detail = f"cannot be sent as stored: {exc.message}"
        return reject(rt, kind, snap, exc, status=EventStatus.FAILED, detail=detail)
    return EventPlan.of(rt, event)


@dataclass(frozen=True)
class EventPlan:
    """The claim of an event's send (processor.abc.ClaimPlan). Its occurrence is the instant
    the event was first claimed: one event, one occurrence."""

    event: Event
    ledger_ref: firestore.DocumentReference
    worker_id: str
    missed: Sequence[Missed] = ()

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
            LedgerKind.EVENT, event.id, event.created_at, event.channel, user=event.user
        )
        return new_entry(identity, self.worker_id, LedgerWrite())

    def claim_fields(self) -> LedgerWrite:
        return LedgerWrite()

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
            worker, expires = entry.get(LedgerField.WORKER), entry.get(LedgerField.LEASE_EXPIRES_AT)
            lease = Lease(worker, expires, self.event.created_at)
            return EventWrite(status=EventStatus.SENDING, lease=lease)
        return EventWrite(status=_SETTLED.get(str(status), EventStatus.FAILED))

    def subject(self, entry: dict[str, Any] | None) -> Event:
        return self.event

    def alongside(self, batch: firestore.WriteBatch) -> None:
        pass

    def log(self, missed: Sequence[Missed]) -> None:
        pass

    def log_fields(self) -> dict[str, Any]:
        return {LedgerField.OCCURRENCE_AT.value: self.event.created_at}

    def landed(self, results: Sequence[Any]) -> None:
        pass
