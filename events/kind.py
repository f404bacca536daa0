"""Notify-once events as a kind of send (processor.abc.Kind): what their outcomes write and
how they are reported. An event is sent once, like a one-off message:

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

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from core.documents.deliveries import LedgerField, LedgerKind, LedgerStatus, LedgerWrite
from core.documents.errors import StoredError
from core.documents.events import EventField, EventStatus, EventWrite
from core.documents.leases import lease_of
from core.documents.people import Holds
from core.documents.write import DELETE
from core.errors import DocumentError
from core.event import Event
from core.models import event_delivery_id
from core.runtime import Runtime
from core.slack import DEFAULT_RETRY_AFTER, Outcome, PostResult
from core.store import EVENTS, Snapshot, due_events, expired_event_leases
from events.claim import plan_retry
from events.unusable_leases import fail_unusable_leases
from formatting.slack_text import SlackMessage, to_slack
from processor.abc import (
    MARK_DELIVERED,
    Claim,
    ClaimPlan,
    Doc,
    Leased,
    OutcomeLine,
    Settle,
    Writes,
)
from processor.gates import Gates, read_gates, settled_writes
from processor.held import live_until
from processor.outcome import Result
from processor.settle import SettleRefused
from processor.subject_lease import OutcomeWords, holds_lease, leased_occurrence, outcome_line

# Event statuses an operator may settle (processor.settle).
_SETTLEABLE = (EventStatus.SENDING, EventStatus.UNCONFIRMED, EventStatus.FAILED)


_WORDS = OutcomeWords(
    delivered="event delivered",
    ambiguous="event outcome unknown; held for reconciliation",
    released="event not delivered; released for retry",
)


class EventKind:
    name = LedgerKind.EVENT
    collection = EVENTS
    id_field = LedgerField.EVENT_ID
    noun = "a sending event"
    summary_key: str | None = None
    # Duplicate callers count themselves on the event (`callers`) while its first caller
    # sends: the ledger entry, which every change of owner writes, is the send's fence.
    fences_subject = False

    def read_ahead(self, rt: Runtime, due: list[Snapshot]) -> Gates:
        """The gates' documents of the page's events to people, in one batched read."""
        return read_gates(rt.db, [snap.to_dict() or {} for snap in due])

    def plan(self, rt: Runtime, snap: Snapshot, ahead: object = None) -> ClaimPlan[Event] | Result:
        return plan_retry(rt, self, snap, ahead)

    def due(
        self, rt: Runtime, now: datetime, limit: int, excluding: Sequence[str] = ()
    ) -> list[Snapshot]:
        return due_events(rt.db, now, limit, excluding=excluding, shards=rt.settings.shards)

    def preview(self, rt: Runtime, due: list[Snapshot], now: datetime) -> list[dict[str, Any]]:
        return [self._preview(snap) for snap in due]

    def _preview(self, snap: Snapshot) -> dict[str, Any]:
        """What its retry would post: the text rendered as `render` renders it."""
        entry = {
            "kind": self.name.value,
            "id": snap.id,
            "channel": snap.get(EventField.CHANNEL),
            "occurrence_at": snap.get(EventField.CREATED_AT),
        }
        try:
            event = Event.from_document(snap.id, snap.to_dict() or {})
        except DocumentError as exc:
            return entry | {"text": None, "error": {"code": exc.code, "message": exc.message}}
        return entry | {"text": to_slack(event.text).text}

    def sweep(self, rt: Runtime) -> Counter[str]:
        return fail_unusable_leases(rt, self)

    def expired(self, db: Any, now: datetime, limit: int) -> list[Snapshot]:
        return expired_event_leases(db, now, limit)

    def leased(self, subject_id: str, data: dict[str, Any]) -> Leased:
        return leased_occurrence(
            self.noun,
            data,
            lambda: Event.from_document(subject_id, data),
            lambda _: event_delivery_id(subject_id),
        )

    def taken_over(
        self, subject_id: str, data: dict[str, Any], leased: Leased, entry: dict[str, Any]
    ) -> Event:
        holds = Holds.from_document(entry.get(LedgerField.GATES))
        return replace(Event.from_document(subject_id, data), holds=holds)

    def channel(self, claim: Claim[Event]) -> str:
        return claim.subject.channel

    def render(self, claim: Claim[Event]) -> SlackMessage:
        return to_slack(claim.subject.text)

    def outcome_writes(
        self, claim: Claim[Event], post: PostResult, now: datetime, max_attempts: int
    ) -> Writes:
        writes = self._outcome_writes(claim, post, now)
        # What the claim reserved for the person's gates: given back, or kept.
        return writes._replace(
            others=settled_writes(claim.subject, claim.delivery_id, post.outcome)
        )

    def _outcome_writes(self, claim: Claim[Event], post: PostResult, now: datetime) -> Writes:
        error = StoredError(post.code, post.detail, now)
        if post.outcome is Outcome.DELIVERED:
            assert post.ts is not None
            event = EventWrite(status=EventStatus.SENT, lease=DELETE, slack_ts=post.ts, sent_at=now)
            ledger = LedgerWrite(status=LedgerStatus.SENT, slack_ts=post.ts, sent_at=now)
            return Writes(event, ledger, Result.SENT)
        if post.outcome is Outcome.FAILED:
            event = EventWrite(status=EventStatus.FAILED, lease=DELETE, last_error=error)
            ledger = LedgerWrite(status=LedgerStatus.FAILED, error=error)
            return Writes(event, ledger, Result.FAILED)
        if post.outcome is Outcome.RETRY_LATER:
            retry_at = now + timedelta(seconds=post.retry_after or DEFAULT_RETRY_AFTER)
            event = EventWrite(
                status=EventStatus.PENDING, next_run_at=retry_at, lease=DELETE, last_error=error
            )
            ledger = LedgerWrite(status=LedgerStatus.RELEASED, error=error, retry_at=retry_at)
            return Writes(event, ledger, Result.RELEASED)
        # Ambiguous: Slack may have posted it; reconciliation settles it once the lease expires.
        return Writes(EventWrite(last_error=error), LedgerWrite(error=error), Result.AMBIGUOUS)

    def unconfirmed_writes(self, claim: Claim[Event], error: StoredError) -> Writes:
        event = EventWrite(status=EventStatus.UNCONFIRMED, lease=DELETE, last_error=error)
        ledger = LedgerWrite(status=LedgerStatus.UNCONFIRMED, error=error)
        return Writes(event, ledger, Result.UNCONFIRMED)

    def settle_writes(self, rt: Runtime, action: Settle, entry: Doc, subject: Doc) -> Writes:
        status = subject.get(EventField.STATUS)
        if status not in _SETTLEABLE:
            raise SettleRefused(f"delivery {action.delivery_id!r}: the event is {status!r}")
        lease_end = live_until(lease_of(subject), action.at)
        if status == EventStatus.SENDING and lease_end is not None:
            raise SettleRefused(
                f"delivery {action.delivery_id!r} is being sent under a live lease until "
                f"{lease_end}"
            )
        event_id = str(entry.get(LedgerField.EVENT_ID))
        try:
            event = Event.from_document(event_id, subject)
        except DocumentError as exc:
            raise SettleRefused(f"event {event_id!r} cannot be sent as stored: {exc}") from None
        if action.name == MARK_DELIVERED:
            claim = Claim(self, event, event_id, event.created_at, action.delivery_id, 0, "", 0, 0)
            return self.outcome_writes(
                claim, PostResult(Outcome.DELIVERED, ts=action.ts), action.at, 0
            )
        released = EventWrite(status=EventStatus.PENDING, next_run_at=action.at, lease=DELETE)
        ledger = LedgerWrite(status=LedgerStatus.RELEASED, retry_at=action.at)
        return Writes(released, ledger, Result.RELEASED)

    def still_leased(self, claim: Claim[Event], subject: dict[str, Any]) -> bool:
        return holds_lease(claim, subject, subject.get(EventField.STATUS), EventStatus.SENDING)

    def log_fields(self, claim: Claim[Event]) -> dict[str, Any]:
        user = {} if claim.subject.user is None else {"user": claim.subject.user}
        return {"event_key": claim.subject.key, **user}

    def outcome_line(self, claim: Claim[Event], post: PostResult, result: Result) -> OutcomeLine:
        return outcome_line(_WORDS, post, result)


EVENT_KIND = EventKind()
