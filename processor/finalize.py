"""Recording what a send did, only while still holding the lease.

Every finalize is one batch over the subject (a message, a rotation, an event) and its ledger
entry, each conditioned on the update time our claim (or our last write) left; what it writes
is the kind's (processor.abc.Records.outcome_writes). If anything else wrote either document
since (a reconciler took the expired lease over, an operator settled it), the batch fails
whole: a worker that wakes up late cannot overwrite newer state, and its late result is
logged. An event's subject is written unconditioned (`Kind.fences_subject`): its duplicate
callers count themselves on it while it is sent, and every change of its owner writes its
ledger entry, so the ledger entry's condition alone is its fence.
A pass records the sends of several claims in one such batch (`finalize_many`): one commit
instead of one each, with the same conditions on every document.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

from google.api_core.exceptions import FailedPrecondition

from core import logs
from core.documents.deliveries import LedgerField, LedgerStatus
from core.documents.errors import StoredError
from core.platform import Outcome, PostResult, posted_fields
from core.runtime import Runtime
from core.store import DELIVERIES, read_in_order
from processor.abc import Claim, Writes
from processor.outcome import Result

# Commits of one outcome: the first, and one more when a precondition failed on an unrelated
# write while the lease is still ours (a fenced document written by someone else since the
# claim). Past these, reconciliation settles the send from Slack's history.
FENCE_TRIES = 2


def finalize(rt: Runtime, claim: Claim[Any], post: PostResult) -> Result:
    """Record what a send did (or what reconciliation proved it did)."""
    writes = claim.kind.outcome_writes(claim, post, rt.clock.now(), rt.settings.max_attempts)
    return _apply(rt, claim, writes, post)


def hold_unconfirmed(rt: Runtime, claim: Claim[Any], code: str | None, detail: str) -> Result:
    """The send's outcome cannot be verified and policy forbids resending: park it as
    `unconfirmed` for a person to settle. Never resent by itself."""
    error = StoredError(code, detail, rt.clock.now())
    post = PostResult(Outcome.AMBIGUOUS, code, detail=detail)
    return _apply(rt, claim, claim.kind.unconfirmed_writes(claim, error), post)


def finalize_many(rt: Runtime, sends: list[tuple[Claim[Any], PostResult]]) -> list[Result]:
    """Record several sends in one commit: the same writes, each still conditioned on the
    update time its own claim left, so the batch lands whole or not at all. When it does
    not (one lease was taken over, or an unrelated field changed), each send is recorded on
    its own by `finalize`, which tells the fenced one from the others. A commit that raises
    otherwise leaves every claim in the batch under its lease, for reconciliation."""
    if len(sends) == 1:
        return [finalize(rt, *sends[0])]
    now = rt.clock.now()
    records = []
    for claim, post in sends:
        writes = claim.kind.outcome_writes(claim, post, now, rt.settings.max_attempts)
        records.append((claim, _stamped(writes, now)))
    try:
        _commit(rt, records)
    except FailedPrecondition:
        return [finalize(rt, claim, post) for claim, post in sends]
    return [writes.result for _, writes in records]


def _stamped(writes: Writes, now: datetime) -> Writes:
    return writes._replace(subject=writes.subject.stamped(now))


def _apply(rt: Runtime, claim: Claim[Any], writes: Writes, post: PostResult) -> Result:
    writes = _stamped(writes, rt.clock.now())
    if _commit_while_leased(
        claim, lambda c: _commit(rt, [(c, writes)]), lambda c: _still_ours(rt, c)
    ):
        return writes.result
    logs.error(
        "late result dropped: the lease was taken over before the outcome was recorded",
        **{claim.kind.id_field: claim.subject_id},
        delivery_id=claim.delivery_id,
        occurrence_at=claim.occurrence_at,
        **claim.kind.log_fields(claim),
        status="fenced",
        outcome=post.outcome.value,
        error_code=post.code,
        **posted_fields(claim.kind.destination(claim), post.ts),
        worker=claim.owner,
    )
    return Result.FENCED


def _commit_while_leased(
    claim: Claim[Any],
    commit: Callable[[Claim[Any]], None],
    still_ours: Callable[[Claim[Any]], Claim[Any] | None],
) -> bool:
    """Commit an outcome under the lease fence (`commit` conditions every write on the
    claim's update times). When a precondition fails only because an unrelated field
    changed (`still_ours` answers the claim with fresh update times), again, at most
    FENCE_TRIES times in all; False when the lease was taken over: the caller logs its late
    result as fenced."""
    for _ in range(FENCE_TRIES):
        try:
            commit(claim)
            return True
        except FailedPrecondition:
            fresh = still_ours(claim)
            if fresh is None:
                return False
            claim = fresh
    return False


def _commit(rt: Runtime, records: list[tuple[Claim[Any], Writes]]) -> None:
    batch = rt.db.batch()
    for claim, writes in records:
        fenced = claim.kind.fences_subject
        batch.update(
            rt.db.collection(claim.kind.collection).document(claim.subject_id),
            writes.subject.to_document(),
            option=rt.db.write_option(last_update_time=claim.subject_version) if fenced else None,
        )
        batch.update(
            rt.db.collection(DELIVERIES).document(claim.delivery_id),
            writes.ledger.to_document(),
            option=rt.db.write_option(last_update_time=claim.ledger_version),
        )
        for collection, doc_id, fields in writes.others:
            batch.set(rt.db.collection(collection).document(doc_id), fields, merge=True)
    batch.commit()  # pragma: SYNCPOINT lease


def _still_ours(rt: Runtime, claim: Claim[Any]) -> Claim[Any] | None:
    subject, ledger = read_in_order(
        rt.db,
        rt.db.collection(claim.kind.collection).document(claim.subject_id),
        rt.db.collection(DELIVERIES).document(claim.delivery_id),
    )
    entry = ledger.to_dict() or {}
    ours = (
        claim.kind.still_leased(claim, subject.to_dict() or {})
        and entry.get(LedgerField.STATUS) == LedgerStatus.CLAIMED
        and entry.get(LedgerField.WORKER) == claim.owner
    )
    if not ours:
        return None
    return replace(claim, subject_version=subject.update_time, ledger_version=ledger.update_time)
