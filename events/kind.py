"""Notify-once events as a kind of send: a record (processor.occurrence_kind) and the rules
that are an event's own. An event is sent once, like a one-off message:

- Delivered: the event is `sent` with its `slack_ts`.
- Failed (a definitive Slack error, or MAX_ATTEMPTS absent sends): `failed`, never resent.
- Not delivered (rate limited, or proven absent by reconciliation): released (`pending`
  with `next_run_at`) and claimed again by a pass through the same ledger entry, after
  Slack's `Retry-After` or reconciliation's backoff (1, 2, 4... minutes).
- Ambiguous (a timeout, a dropped connection, a caller that died after its claim): the
  claim and its lease stay; reconciliation reads the channel's history once the lease has
  expired: found means sent, never posted twice.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from core.documents.deliveries import LedgerField, LedgerKind
from core.documents.events import EventStatus, EventWrite
from core.documents.people import Holds
from core.documents.write import DELETE, UNSET
from core.event import Event
from core.models import event_delivery_id
from core.platform import SLACK
from core.queues import Queue
from core.runtime import Runtime
from core.store import EVENTS, Snapshot
from events.claim import plan_retry
from formatting.render import Rendered, render
from processor.abc import Doc, Kind, Planned
from processor.gated_rules import GatedRules
from processor.gates import Gates
from processor.occurrence_kind import (
    Delivered,
    OccurrenceKind,
    Statuses,
    Words,
)
from processor.outcome import Result


class EventRules(GatedRules[Event]):
    def plan(self, rt: Runtime, kind: Kind, snap: Snapshot, ahead: Gates | None) -> Planned[Event]:
        return plan_retry(rt, kind, snap, ahead)

    def delivered(
        self, subject: Event, occurrence_at: datetime, ts: str | None, now: datetime
    ) -> Delivered:
        sent = EventWrite(
            status=EventStatus.SENT,
            lease=DELETE,
            slack_ts=UNSET if ts is None or subject.platform != SLACK else ts,
            sent_at=now,
        )
        return Delivered(sent, Result.SENT)

    def released(self, subject: Event, occurrence_at: datetime) -> EventWrite:
        return EventWrite(status=EventStatus.PENDING)

    def render(self, subject: Event, delivery_id: str) -> Rendered:
        return render(subject.platform, subject.text)

    def taken_over(self, subject: Event, entry: Doc) -> Event:
        return replace(subject, holds=Holds.from_document(entry.get(LedgerField.GATES)))

    def log_fields(self, subject: Event) -> dict[str, Any]:
        user = {} if subject.user is None else {"user": subject.user}
        return {"event_key": subject.key, **user}

    def occurrence(self, subject: Event) -> datetime | None:
        return subject.created_at  # one event, one occurrence


EVENT_KIND: OccurrenceKind[Event, Gates] = OccurrenceKind(
    name=LedgerKind.EVENT,
    id_field=LedgerField.EVENT_ID,
    queue=Queue(EVENTS, (EventStatus.PENDING,), EventStatus.SENDING),
    statuses=Statuses(
        failed=EventStatus.FAILED,
        unconfirmed=EventStatus.UNCONFIRMED,
        every=frozenset(EventStatus),
        live=frozenset((EventStatus.PENDING, EventStatus.SENDING)),
    ),
    write=EventWrite,
    words=Words(
        delivered="event delivered",
        ambiguous="event outcome unknown; held for reconciliation",
        released="event not delivered; released for retry",
        noun="a sending event",
    ),
    parse=Event.from_document,
    delivery_id=lambda event_id, _occurrence: event_delivery_id(event_id),
    rules=EventRules(),
    # Duplicate callers count themselves on the event (`callers`) while its first caller
    # sends: the ledger entry, which every change of owner writes, is the send's fence.
    fences_subject=False,
)
