"""A kind whose subject leases a single occurrence at a time (a scheduled message, an event):
described by a record, `OccurrenceKind`, from which the pipeline derives all it shares.

The record names the collection and its id field, the ledger kind, the status each outcome
writes, the subject's write class, and how lines and held leases word it. From it come the
due and expired queries (core.queues.Queue), the lease checks, the failed, released,
ambiguous and unconfirmed writes, the outcome line, the sweep of leases no query finds, the
operator's settle, `fail-held` and the doctor's verdicts. What really differs is the kind's
own (`OccurrenceRules`): its claim plan, its delivered write, its `render`, and a few
defaults it may change.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from core.documents.deliveries import LedgerField, LedgerStatus, LedgerWrite, sent_write
from core.documents.errors import StoredError
from core.documents.leases import LEASE, LeaseField, invalid_lease, lease_of, usable_lease
from core.documents.subjects import SubjectField, SubjectWrite, shown_destination
from core.documents.write import DELETE, UNSET
from core.errors import DocumentError
from core.platform import DEFAULT_RETRY_AFTER, Destination, Outcome, PostResult
from core.queues import Queue
from core.runtime import Runtime
from core.store import Snapshot
from formatting.render import Rendered
from processor.abc import (
    MARK_DELIVERED,
    Claim,
    Doc,
    Kind,
    Leased,
    LeaseUnreadable,
    OutcomeLine,
    Planned,
    Settle,
    Writes,
)
from processor.doctor import Finding, lease_finding, rejected, unknown_status, unscheduled
from processor.outcome import Result
from processor.reconcile import settle_each
from processor.reject import reject
from processor.settle import SettleRefused

S = TypeVar("S", bound="Addressed")
A = TypeVar("A")
Others = tuple[tuple[str, str, dict[str, Any]], ...]  # processor.abc.Writes.others


class Addressed(Protocol):
    """What the pipeline reads of a single-occurrence subject itself: where it posts (None:
    nowhere yet, a person's DM not opened) and to whom."""

    @property
    def channel(self) -> str | None: ...

    @property
    def user(self) -> str | None: ...

    @property
    def platform(self) -> str: ...


@dataclass(frozen=True)
class Statuses:
    """The statuses a subject stores besides the queue's (`waiting` ones are due, `sending`
    holds a lease: core.queues.Queue): a failed send ends `failed`, an unverifiable one
    `unconfirmed`; `every`: all the kind knows; `live`: those a pass may still send from
    (each must be in a shard the due scan reads)."""

    failed: enum.StrEnum
    unconfirmed: enum.StrEnum
    every: frozenset[str]
    live: frozenset[str]


@dataclass(frozen=True)
class Words:
    """How a kind's lines read: the outcome lines, and the noun of a held lease's detail."""

    delivered: str
    ambiguous: str
    released: str
    noun: str  # "a sending message"


class Delivered(NamedTuple):
    """What a delivered post writes on its subject, and what it counts as."""

    subject: SubjectWrite
    result: Result


class OccurrenceRules(ABC, Generic[S, A]):
    """What a single-occurrence kind writes itself. `plan`, `delivered`, `released` and
    `render` are each kind's; the others have defaults a kind may change."""

    @abstractmethod
    def plan(self, rt: Runtime, kind: Kind, snap: Snapshot, ahead: A | None) -> Planned[S]:
        """processor.abc.Claims.plan; `kind`: the kind it plans for, which a document
        settled here (rejected, repaired from the ledger) is logged as."""

    @abstractmethod
    def delivered(
        self, subject: S, occurrence_at: datetime, ts: str | None, now: datetime
    ) -> Delivered:
        """What a post of `subject`'s occurrence, seen in Slack as `ts`, writes."""

    @abstractmethod
    def released(self, subject: S, occurrence_at: datetime) -> SubjectWrite:
        """The subject's waiting fields when its occurrence is released for another try
        (`next_run_at`, the lease's end and the error are the pipeline's)."""

    @abstractmethod
    def render(self, subject: S, delivery_id: str) -> Rendered:
        """The post of `subject`'s occurrence `delivery_id` (processor.abc.Posts.render); a
        DocumentError when it cannot be rendered (never sent)."""

    def read_ahead(self, rt: Runtime, due: list[Snapshot]) -> A | None:
        """processor.abc.Claims.read_ahead; by default nothing."""
        return None

    def preview(
        self, rt: Runtime, due: list[Snapshot], now: datetime
    ) -> list[dict[str, Any]] | None:
        """processor.abc.Claims.preview; by default (None) each document as `render` posts
        its occurrence (`occurrence`, else its `next_run_at`) now."""
        return None

    def taken_over(self, subject: S, entry: Doc) -> S:
        """The subject of a reconciler's claim, from the stored one and its ledger `entry`
        (what its claim wrote there); by default the stored one."""
        return subject

    def log_fields(self, subject: S) -> dict[str, Any]:
        """The fields every line about a claim of `subject` carries; by default its person."""
        return {} if subject.user is None else {"user": subject.user}

    def sent(self, ahead: A | None, claim: Claim[S], outcome: Outcome) -> None:
        """processor.abc.Claims.sent; by default nothing."""

    def beside(self, claim: Claim[S], outcome: Outcome) -> Others:
        """Other documents an outcome's commit merges into (a person's gates); none."""
        return ()

    def settle_check(self, rt: Runtime, action: Settle, entry: Doc, data: Doc) -> None:
        """SettleRefused when `entry` is not the occurrence the subject is on now; by
        default every entry is (one occurrence per subject)."""

    def occurrence(self, subject: S) -> datetime | None:
        """The occurrence a subject is on when no lease names it (an event's only one);
        by default none."""
        return None

    def next_due(self, subject: S, data: Doc, now: datetime) -> datetime | None:
        """The `next_run_at` the doctor's `--fix` sets on a waiting subject without one;
        by default now."""
        return now


@dataclass(frozen=True)
class OccurrenceKind(Generic[S, A]):
    """A kind of send whose subject leases one occurrence at a time: processor.abc's
    protocols, all derived from this record and its `rules`."""

    name: str  # the ledger entry's `kind` (a LedgerKind, for the kinds in core)
    id_field: str  # the ledger's and the log's field naming the subject (a LedgerField)
    queue: Queue
    statuses: Statuses
    write: type[SubjectWrite]
    words: Words
    parse: Callable[[str, Doc], S]  # the subject, or DocumentError
    delivery_id: Callable[[str, datetime], str]  # the ledger id of (subject id, occurrence)
    rules: OccurrenceRules[S, A]
    # processor.abc.Kind.fences_subject; the pass summary's own key (None: none).
    fences_subject: bool = True
    summary_key: str | None = None

    def __post_init__(self) -> None:
        if self.queue.sending is None:
            raise ValueError(f"{self.name}: a single-occurrence kind leases in a status")

    @property
    def collection(self) -> str:
        return self.queue.collection

    @property
    def sending(self) -> str:
        """The status of a subject under a lease."""
        assert self.queue.sending is not None  # __post_init__
        return self.queue.sending

    @property
    def noun(self) -> str:
        return self.words.noun

    # The pass (processor.abc.Claims).

    def due(
        self, rt: Runtime, now: datetime, limit: int, excluding: Sequence[str] = ()
    ) -> list[Snapshot]:
        return self.queue.due(rt.db, now, limit, excluding=excluding, shards=rt.settings.shards)

    def read_ahead(self, rt: Runtime, due: list[Snapshot]) -> A | None:
        return self.rules.read_ahead(rt, due)

    def plan(self, rt: Runtime, snap: Snapshot, ahead: A | None) -> Planned[S]:
        return self.rules.plan(rt, self, snap, ahead)

    def sent(self, ahead: A | None, claim: Claim[S], outcome: Outcome) -> None:
        self.rules.sent(ahead, claim, outcome)

    def preview(self, rt: Runtime, due: list[Snapshot], now: datetime) -> list[dict[str, Any]]:
        own = self.rules.preview(rt, due, now)
        previews = [self._preview(snap) for snap in due] if own is None else own
        return [{"kind": str(self.name)} | preview for preview in previews]

    def _preview(self, snap: Snapshot) -> dict[str, Any]:
        """What a send of the document would post now: its text as `render` renders it."""
        data = snap.to_dict() or {}
        preview = {"id": snap.id, **shown_destination(data)}
        try:
            subject = self.parse(snap.id, data)
            occurrence = self.rules.occurrence(subject) or data[SubjectField.NEXT_RUN_AT]
            text = self.rules.render(subject, self.delivery_id(snap.id, occurrence)).text
        except DocumentError as exc:
            return preview | {"text": None, "error": {"code": exc.code, "message": exc.message}}
        return preview | {"text": text, "occurrence_at": occurrence.isoformat()}

    def sweep(self, rt: Runtime) -> Counter[str]:
        """Subjects `sending` under a lease no pass can settle (Queue.unusable): each ends
        `failed` (`invalid_lease`), as a claim rejects a document it cannot send."""
        snaps = self.queue.unusable(rt.db, rt.settings.tick_limit)
        return settle_each(snaps, lambda snap: self._reject_unusable(rt, snap), self.id_field)

    def _reject_unusable(self, rt: Runtime, snap: Snapshot) -> Result | None:
        data = snap.to_dict() or {}
        if usable_lease(data.get(LEASE)):
            return None
        exc = invalid_lease(data.get(LEASE))
        due = data.get(SubjectField.NEXT_RUN_AT)
        return reject(
            rt,
            self,
            snap,
            exc,
            status=self.statuses.failed,
            detail=f"cannot be sent as stored: {exc.message}",
            occurrence_at=due if isinstance(due, datetime) else None,
        )

    # Sending and recording (processor.abc.Sends).

    def destination(self, claim: Claim[S]) -> Destination:
        channel = claim.subject.channel
        if channel is None:  # a person's DM is opened before every claim; never here
            raise DocumentError("missing_channel", f"no DM channel for {claim.subject.user}")
        return Destination(claim.subject.platform, channel)

    def render(self, claim: Claim[S]) -> Rendered:
        return self.rules.render(claim.subject, claim.delivery_id)

    def log_fields(self, claim: Claim[S]) -> dict[str, Any]:
        return self.rules.log_fields(claim.subject)

    def outcome_line(self, claim: Claim[S], post: PostResult, result: Result) -> OutcomeLine:
        """Failed and unconfirmed outcomes are alerts; an ambiguous or released one a
        warning (released: with Slack's `retry_after`)."""
        alert = result in (Result.FAILED, Result.UNCONFIRMED)
        fields: dict[str, Any] = {}
        if result is Result.AMBIGUOUS:
            level, text = "warning", self.words.ambiguous
        elif result is Result.RELEASED:
            level, text = "warning", self.words.released
            fields["retry_after"] = post.retry_after
        else:
            level, text = "info", self.words.delivered
        return OutcomeLine(level, text, post.code, post.detail, alert, fields)

    def outcome_writes(
        self, claim: Claim[S], post: PostResult, now: datetime, max_attempts: int
    ) -> Writes:
        writes = self._outcome_writes(claim, post, now)
        return writes._replace(others=self.rules.beside(claim, post.outcome))

    def _outcome_writes(self, claim: Claim[S], post: PostResult, now: datetime) -> Writes:
        error = StoredError(post.code, post.detail, now)
        if post.outcome is Outcome.DELIVERED:
            return self._delivered(claim.subject, claim.occurrence_at, post.ts, now)
        if post.outcome is Outcome.FAILED:
            failed = self.write(status=self.statuses.failed, lease=DELETE, last_error=error)
            return Writes(
                failed, LedgerWrite(status=LedgerStatus.FAILED, error=error), Result.FAILED
            )
        if post.outcome is Outcome.RETRY_LATER:
            retry_at = now + timedelta(seconds=post.retry_after or DEFAULT_RETRY_AFTER)
            released = self._released(claim.subject, claim.occurrence_at, retry_at, error)
            ledger = LedgerWrite(status=LedgerStatus.RELEASED, error=error, retry_at=retry_at)
            return Writes(released, ledger, Result.RELEASED)
        # Ambiguous: Slack may have posted it. The claim and its lease stay, so nobody
        # resends it blindly; reconciliation settles it once the lease has expired.
        return Writes(self.write(last_error=error), LedgerWrite(error=error), Result.AMBIGUOUS)

    def _delivered(self, subject: S, occurrence: datetime, ts: str | None, now: datetime) -> Writes:
        delivered = self.rules.delivered(subject, occurrence, ts, now)
        ledger = sent_write(subject.platform, ts, now)
        return Writes(delivered.subject, ledger, delivered.result)

    def _released(
        self, subject: S, occurrence: datetime, retry_at: datetime, error: StoredError | None
    ) -> SubjectWrite:
        waiting = self.rules.released(subject, occurrence)
        last_error = UNSET if error is None else error
        return replace(waiting, next_run_at=retry_at, lease=DELETE, last_error=last_error)

    def unconfirmed_writes(self, claim: Claim[S], error: StoredError) -> Writes:
        parked = self.write(status=self.statuses.unconfirmed, lease=DELETE, last_error=error)
        ledger = LedgerWrite(status=LedgerStatus.UNCONFIRMED, error=error)
        return Writes(parked, ledger, Result.UNCONFIRMED)

    def still_leased(self, claim: Claim[S], subject: Doc) -> bool:
        lease = lease_of(subject)
        return (
            subject.get(SubjectField.STATUS) == self.sending
            and lease.get(LeaseField.OWNER) == claim.owner
            and lease.get(LeaseField.OCCURRENCE_AT) == claim.occurrence_at
        )

    # Reconciliation (processor.abc.Reconciles).

    def leased(self, subject_id: str, data: Doc) -> Leased:
        """The occurrence an expired lease names; LeaseUnreadable when the subject no longer
        parses or the lease names no occurrence."""
        try:
            self.parse(subject_id, data)
        except DocumentError as exc:
            raise LeaseUnreadable(
                exc.code, f"{self.noun} no longer parses: {exc.message}"
            ) from None
        occurrence = lease_of(data).get(LeaseField.OCCURRENCE_AT)
        if not isinstance(occurrence, datetime):
            raise LeaseUnreadable("invalid_lease", f"{self.noun}'s lease names no occurrence")
        return Leased(occurrence, self.delivery_id(subject_id, occurrence), {})

    def taken_over(self, subject_id: str, data: Doc, leased: Leased, entry: Doc) -> S:
        return self.rules.taken_over(self.parse(subject_id, data), entry)

    # The operator (processor.abc.Settles, Operates).

    def settle_writes(self, rt: Runtime, action: Settle, entry: Doc, subject: Doc) -> Writes:
        """`mark_delivered` writes what a delivered post writes; `release` makes the subject
        due now on the same occurrence, claimed again through the same ledger entry."""
        status = subject.get(SubjectField.STATUS)
        subject_id = str(entry.get(self.id_field))
        if status not in (self.sending, self.statuses.unconfirmed, self.statuses.failed):
            raise SettleRefused(
                f"delivery {action.delivery_id!r} is not the current occurrence of "
                f"{self.name} {subject_id!r}: it is {status!r}; it has moved on"
            )
        self.rules.settle_check(rt, action, entry, subject)
        try:
            parsed = self.parse(subject_id, subject)
        except DocumentError as exc:
            raise SettleRefused(
                f"{self.name} {subject_id!r} cannot be sent as stored "
                f"({exc.code}: {exc.message}); fix the document first"
            ) from None
        occurrence = entry[LedgerField.OCCURRENCE_AT]
        if action.name == MARK_DELIVERED:
            return self._delivered(parsed, occurrence, action.ts, action.at)
        released = self._released(parsed, occurrence, action.at, None)
        ledger = LedgerWrite(status=LedgerStatus.RELEASED, retry_at=action.at)
        return Writes(released, ledger, Result.RELEASED)

    def held_failed(
        self, doc_id: str, data: Doc, error: StoredError
    ) -> tuple[SubjectWrite, str | None]:
        """The subject ends `failed`; the occurrence is its lease's, else the one it keeps
        for a released retry (an event's only one)."""
        failed = self.write(status=self.statuses.failed, lease=DELETE, last_error=error)
        occurrence = lease_of(data).get(LeaseField.OCCURRENCE_AT)
        if not isinstance(occurrence, datetime):
            try:
                occurrence = self.rules.occurrence(self.parse(doc_id, data))
            except DocumentError:
                occurrence = None
        delivery_id = self.delivery_id(doc_id, occurrence) if occurrence is not None else None
        return failed, delivery_id

    def examine(self, doc_id: str, data: Doc, now: datetime) -> Finding | None:
        """A status the kind does not know; a waiting or sending subject the processor
        rejects; a lease reconciliation can never settle; a `next_run_at` the due query
        never finds (with the one `--fix` sets)."""
        status = data.get(SubjectField.STATUS)
        if not isinstance(status, str) or status not in self.statuses.every:
            return unknown_status(self.collection, doc_id, status, self.statuses.every)
        if status not in (*self.queue.waiting, self.sending) or data.get(SubjectField.DELETED):
            return None  # settled, deleted, parked for a person, or paused: nothing to send
        try:
            subject = self.parse(doc_id, data)
        except DocumentError as exc:
            return rejected(self.collection, doc_id, exc)
        if status == self.sending:
            return lease_finding(self.collection, doc_id, data.get(LEASE), LeaseField.OCCURRENCE_AT)
        if isinstance(data.get(SubjectField.NEXT_RUN_AT), datetime):
            return None
        try:
            due = self.rules.next_due(subject, data, now)
        except DocumentError as exc:
            return rejected(self.collection, doc_id, exc)
        return unscheduled(self.collection, doc_id, data, due)

    def live(self, data: Doc) -> bool:
        return data.get(SubjectField.STATUS) in self.statuses.live
