"""The pipeline's interfaces: what a kind of send supplies, and the claim it works on.

Every kind (scheduled messages, events, rotation days) lives the same life: found due,
claimed with a ledger entry and a lease, sent, finalized under the fence, reconciled,
escalated, settled by an operator. `processor/` runs that life once; a kind supplies only
its rules, each caller's share through a protocol of its own: `Claims` (the pass),
`Sends` (deliver and finalize), `Reconciles`, `Settles` and `Operates` (fail-held and the
doctor), all over `Kind`, what every caller knows a kind by. A kind that leases a single
occurrence at a time is mostly data (processor.occurrence_kind).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, Protocol, TypeVar

from google.cloud import firestore

from core.documents.deliveries import LedgerWrite
from core.documents.errors import StoredError
from core.documents.subjects import SubjectWrite
from core.platform import Destination, Outcome, PostResult
from formatting.render import Rendered
from processor.outcome import Result

if TYPE_CHECKING:
    from core.named_batch import Landed, NamedBatch
    from core.queues import Queue
    from core.runtime import Runtime
    from core.store import Snapshot
    from processor.doctor import Finding

S = TypeVar("S")
A = TypeVar("A")  # what a kind's claims read ahead for a page (processor.abc.Claims)
Doc = dict[str, Any]  # a stored document's fields, as read
S_co = TypeVar("S_co", covariant=True)


@dataclass(frozen=True)
class Claim(Generic[S]):
    """One claimed occurrence: after its claim, exactly one worker owns its send. Every later
    write of the subject and the ledger entry is conditioned on the update times the claim
    (or its last write) left: that is the lease fence."""

    kind: Sends[S]
    subject: S  # the kind's own view of what is sent (a Message, a rotation's day turn)
    subject_id: str  # the document id in `kind.collection`
    occurrence_at: datetime
    delivery_id: str
    attempts: int
    owner: str
    subject_version: Any
    ledger_version: Any
    # The update times of the channel pacing slots the claim wrote (processor.channel_slots).
    slot_versions: tuple[Any, ...] = ()
    # The latest this claim may start its post (processor.history_search.post_deadline);
    # None for a reconciler's take-over, which never posts.
    post_by: datetime | None = None


class Writes(NamedTuple):
    """What recording an outcome writes: to the subject, to its ledger entry, and what it
    counts as."""

    subject: SubjectWrite
    ledger: LedgerWrite
    result: Result
    # Other documents the same commit merges into, unconditioned: (collection, id, fields).
    # A kind's bookkeeping beside the send (a person's gates, processor.gates).
    others: tuple[tuple[str, str, dict[str, Any]], ...] = ()


class OutcomeLine(NamedTuple):
    """The one log line of a delivery outcome, as its kind words it. `alert`: escalated (an
    ERROR line and an alert post) instead of logged."""

    level: str  # "info", "warning" or "error"
    message: str
    code: str | None
    detail: str
    alert: bool
    fields: dict[str, Any]


# The operator's settle actions (processor.settle).
MARK_DELIVERED = "mark_delivered"
RELEASE = "release"


@dataclass(frozen=True)
class Settle:
    """An operator's settle action on a ledger entry (processor.settle): `mark_delivered`,
    with the Slack `ts` a person saw, or `release`; who decided it, why, and when."""

    name: str
    delivery_id: str
    reason: str
    by: str
    at: datetime
    ts: str | None = None


class Leased(NamedTuple):
    """What an expired lease names: the occurrence whose send reconciliation settles."""

    occurrence_at: datetime
    delivery_id: str
    fields: dict[str, Any]  # log fields naming the occurrence (a rotation day's date, say)


class LeaseUnreadable(Exception):
    """An expired lease that cannot be settled as stored (the subject no longer parses, the
    lease names no occurrence): held for a person (processor.held)."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


@dataclass(frozen=True)
class Missed:
    """A ledger entry a claim creates in its own batch: occurrences that will never be sent,
    recorded `skipped`. A second worker's identical record fails its batch rather than
    doubling it."""

    ref: firestore.DocumentReference
    fields: dict[str, Any]
    count: int = 1  # the occurrences it stands for


@dataclass(frozen=True)
class Settlement:
    """A due document that a kind's plan settles instead of claiming (rejected, cancelled,
    recorded skipped, rescheduled...): decided by the plan, which writes nothing; written
    when the pipeline applies it (processor.claim.claim_occurrence)."""

    apply: Callable[[Runtime], Result]


@dataclass(frozen=True)
class OpenDM(Generic[S_co]):
    """A plan that needs a person's direct-message channel before it can be made: the
    pipeline opens it (processor.claim.addressed: Slack answers the same channel every time
    and posts nothing) and hands Slack's answer, the channel or its refusal, to `then`."""

    user: str
    then: Callable[[str | PostResult], ClaimPlan[S_co] | Settlement]


class ClaimPlan(Protocol[S_co]):
    """What a kind's claim of one due document writes (Claims.plan); processor.claim commits
    it."""

    @property
    def occurrence_at(self) -> datetime: ...

    @property
    def ledger_ref(self) -> firestore.DocumentReference: ...

    @property
    def missed(self) -> Sequence[Missed]: ...

    def new_entry(self) -> dict[str, Any]:
        """The ledger entry's fields that name the occurrence, as first written."""
        ...

    def claim_fields(self) -> LedgerWrite:
        """What the kind adds to the ledger entry on every claim of it (whose turn, say)."""
        ...

    def claimed(
        self, owner: str, expires_at: datetime, attempts: int, missed: Sequence[Missed]
    ) -> SubjectWrite:
        """The subject's update on a claim: its lease, and `missed` counted."""
        ...

    def repaired(
        self, entry: dict[str, Any], now: datetime, missed: Sequence[Missed]
    ) -> SubjectWrite:
        """The subject's update that brings it in line with its ledger `entry`, which settled
        (or holds) the occurrence already: nothing is sent; `missed` counted."""
        ...

    def subject(self, entry: dict[str, Any] | None) -> S_co:
        """The claimed subject; `entry`: the ledger entry claimed again (None: a new one)."""
        ...

    def alongside(self, batch: NamedBatch) -> None:
        """Other writes the claim makes in its batch, each under its own precondition."""
        ...

    def log(self, missed: Sequence[Missed]) -> None:
        """The lines a landed claim (or repair) owes: what it recorded as missed."""
        ...

    def log_fields(self) -> dict[str, Any]:
        """The fields naming the occurrence in a line about it."""
        ...

    def landed(self, landed: Landed) -> None:
        """The claim's batch landed, leaving each document it wrote at its version (what
        the kind carries forward for the rest of the pass)."""
        ...


# What a kind's plan of a due document comes to (Claims.plan).
Planned = ClaimPlan[S_co] | OpenDM[S_co] | Settlement | Result


class Kind(Protocol):
    """What every caller knows a kind by."""

    @property
    def name(self) -> str:
        """The ledger entry's `kind` (a LedgerKind, for the kinds in core)."""
        ...

    @property
    def collection(self) -> str: ...

    @property
    def id_field(self) -> str:
        """The ledger's and the log's field naming the subject (a LedgerField, for the kinds
        in core)."""
        ...

    @property
    def noun(self) -> str:
        """How a held lease's detail names one: "a sending message"."""
        ...

    @property
    def queue(self) -> Queue:
        """The pass's queries over the collection: due, expired, outside the shards."""
        ...

    @property
    def fences_subject(self) -> bool:
        """Whether a claim of a released entry (processor.claim), a finalize and a take-over
        are conditioned on the subject's update time as well as on its ledger entry's. The
        entry alone fences a kind whose subject others write at any time (an event's
        duplicate callers count themselves on it) and whose every change of owner (claim,
        release, take-over, settle, fail-held) writes the entry in the same batch; such an
        entry is claimed again only when it says itself that it is released and due
        (processor.claim.reclaimable)."""
        ...


class Claims(Kind, Protocol[S_co, A]):
    """What the pass needs of a kind: what is due, and the claim of each due document."""

    @property
    def summary_key(self) -> str | None:
        """The pass summary's key for this kind's own counts ("rotations"); None: none."""
        ...

    def due(
        self, rt: Runtime, now: datetime, limit: int, excluding: Sequence[str] = ()
    ) -> list[Snapshot]:
        """Due documents, oldest first: at most `limit`, leaving out the channels
        `excluding` (processor.due_page)."""
        ...

    def read_ahead(self, rt: Runtime, due: list[Snapshot]) -> A:
        """What the claims of a page read once, in one batch, before the first claim (a
        message's gates: its person's document). A pass hands it to each `plan`."""
        ...

    def plan(self, rt: Runtime, snap: Snapshot, ahead: A | None) -> Planned[S_co]:
        """The claim of the occurrence a due document (as just read) is due for; or what
        settles the document instead (a Settlement); or a Result when there is nothing to
        do (not due after all). It reads, and writes nothing; a claim to a person may need
        their DM opened first (OpenDM). `ahead`: what `read_ahead` read for the document's
        page (None: read what it needs)."""
        ...

    def sent(self, ahead: A | None, claim: Claim[Any], outcome: Outcome) -> None:
        """A claim of the page was sent with `outcome`: what the page read ahead learns of it
        for the claims after it (a give-back of a person's gates), before it is recorded."""
        ...

    def preview(self, rt: Runtime, due: list[Snapshot], now: datetime) -> list[dict[str, Any]]:
        """What a real pass would post for `due`; writes nothing."""
        ...

    def sweep(self, rt: Runtime) -> Counter[str]:
        """What the pass settles besides expired leases (documents no lease query finds)."""
        ...


class Posts(Kind, Protocol[S]):
    """What sending a claim, and its one outcome line, need of its kind (processor.deliver)."""

    def destination(self, claim: Claim[S]) -> Destination:
        """Where the claim posts: a platform, and a conversation on it."""
        ...

    def render(self, claim: Claim[S]) -> Rendered:
        """The post, as the claim's platform takes it (formatting.render); a DocumentError
        when the subject cannot be rendered (never sent)."""
        ...

    def log_fields(self, claim: Claim[S]) -> dict[str, Any]:
        """The fields every line about this claim carries, besides its ids and
        `occurrence_at` (a rotation day's local date, say)."""
        ...

    def outcome_line(self, claim: Claim[S], post: PostResult, result: Result) -> OutcomeLine:
        """How this kind reports an outcome."""
        ...


class Records(Kind, Protocol[S]):
    """What recording an outcome under the lease fence needs (processor.finalize)."""

    def outcome_writes(
        self, claim: Claim[S], post: PostResult, now: datetime, max_attempts: int
    ) -> Writes:
        """What recording `post` writes (delivered, failed, released or rolled back,
        ambiguous); `max_attempts` is MAX_ATTEMPTS."""
        ...

    def unconfirmed_writes(self, claim: Claim[S], error: StoredError) -> Writes:
        """What parking the claim `unconfirmed` writes (its outcome cannot be verified and
        policy forbids sending again)."""
        ...

    def still_leased(self, claim: Claim[S], subject: Doc) -> bool:
        """Whether the stored subject still shows this claim's lease (an unrelated write
        changed it, not a take-over)."""
        ...


class Sends(Posts[S], Records[S], Protocol[S]):
    """A claim's kind: what it is posted and recorded with."""


class Reconciles(Sends[S], Protocol[S]):
    """What settling an expired lease needs (processor.reconcile)."""

    def leased(self, subject_id: str, data: Doc) -> Leased:
        """The occurrence an expired lease names; LeaseUnreadable when it cannot be read."""
        ...

    def taken_over(self, subject_id: str, data: Doc, leased: Leased, entry: Doc) -> S:
        """The subject of a reconciler's claim on the lease (`entry`: its ledger entry)."""
        ...


class Settles(Kind, Protocol):
    """What an operator's settle needs (processor.settle)."""

    def settle_writes(self, rt: Runtime, action: Settle, entry: Doc, subject: Doc) -> Writes:
        """What an operator's `action` on the ledger `entry` writes, `subject` being the
        stored subject; processor.settle.SettleRefused when the kind's rules forbid it (the
        entry is not the subject's current occurrence...). The live-lease refusal is
        processor.settle's own."""
        ...


class Operates(Kind, Protocol):
    """What the operator's `fail-held` and `doctor` need (processor.fail_held, doctor)."""

    def examine(self, doc_id: str, data: Doc, now: datetime) -> Finding | None:
        """Why the document will never be sent as stored, if it will not (processor.doctor)."""
        ...

    def held_failed(
        self, doc_id: str, data: Doc, error: StoredError
    ) -> tuple[SubjectWrite, str | None]:
        """What `fail-held` writes on the stored subject `data` whose lease it ends (perhaps
        none: `sending` without one), and the ledger id of the occurrence the lease names
        (None: none it can name)."""
        ...

    def live(self, data: Doc) -> bool:
        """Whether a pass may still send from the document: it must be in a shard the due
        scan reads (processor.doctor)."""
        ...


class Passes(Claims[S, A], Reconciles[S], Protocol[S, A]):
    """What a pass needs of a kind: its due documents claimed and sent, its expired leases
    reconciled (processor.kind_pass, processor.publish)."""


class AnyKind(Passes[Any, Any], Settles, Operates, Protocol):
    """A kind of send, whole: what the targets hand the pipeline (targets.kinds)."""
