"""Recording what a send did, only while still holding the lease.

Every finalize is one batch over the message and its ledger entry, each conditioned on the
update time our claim (or our last write) left. If anything else wrote either document since
(a reconciler took the expired lease over, an operator settled it), the batch fails whole:
a worker that wakes up late cannot overwrite newer state, and its late result is logged.
A pass records the sends of several claims in one such batch (`finalize_many`): one commit
instead of one each, with the same conditions on every document.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any, TypeVar

from google.api_core.exceptions import FailedPrecondition
from google.cloud import firestore

from core import logs
from core.models import LedgerStatus, Status
from core.runtime import Runtime
from core.slack import DEFAULT_RETRY_AFTER, Outcome, PostResult
from core.store import DELIVERIES, MESSAGES, read_in_order
from processor.advance import after_occurrence
from processor.claim import Claim
from processor.outcome import Result

C = TypeVar("C")


def finalize(rt: Runtime, claim: Claim, post: PostResult) -> Result:
    """Record what a send did (or what reconciliation proved it did)."""
    message_update, ledger_update, result = _updates(claim, post, rt.clock.now())
    return _apply(rt, claim, message_update, ledger_update, result, post)


def hold_unconfirmed(rt: Runtime, claim: Claim, code: str | None, detail: str) -> Result:
    """The send's outcome cannot be verified and policy forbids resending: park it as
    `unconfirmed` for a person to settle. Never resent by itself."""
    error = {"code": code, "message": detail, "at": rt.clock.now()}
    message = {"status": Status.UNCONFIRMED, "lease": firestore.DELETE_FIELD, "last_error": error}
    ledger = {"status": LedgerStatus.UNCONFIRMED, "error": error}
    post = PostResult(Outcome.AMBIGUOUS, code, detail=detail)
    return _apply(rt, claim, message, ledger, Result.UNCONFIRMED, post)


def finalize_many(rt: Runtime, sends: list[tuple[Claim, PostResult]]) -> list[Result]:
    """Record several sends in one commit: the same writes, each still conditioned on the
    update time its own claim left, so the batch lands whole or not at all. When it does
    not (one lease was taken over, or an unrelated field changed), each send is recorded on
    its own by `finalize`, which tells the fenced one from the others. A commit that raises
    otherwise leaves every claim in the batch under its lease, for reconciliation."""
    if len(sends) == 1:
        return [finalize(rt, *sends[0])]
    now = rt.clock.now()
    records = []
    results = []
    for claim, post in sends:
        message_update, ledger_update, result = _updates(claim, post, now)
        message_update |= {"updated_at": now, "version": firestore.Increment(1)}
        records.append((claim, message_update, ledger_update))
        results.append(result)
    try:
        _commit(rt, records)
    except FailedPrecondition:
        return [finalize(rt, claim, post) for claim, post in sends]
    return results


def _apply(
    rt: Runtime,
    claim: Claim,
    message_update: dict[str, Any],
    ledger_update: dict[str, Any],
    result: Result,
    post: PostResult,
) -> Result:
    now = rt.clock.now()
    message_update |= {"updated_at": now, "version": firestore.Increment(1)}
    if commit_while_leased(
        claim,
        lambda c: _commit(rt, [(c, message_update, ledger_update)]),
        lambda c: _still_ours(rt, c),
    ):
        return result
    logs.error(
        "late result dropped: the lease was taken over before the outcome was recorded",
        message_id=claim.message.id,
        delivery_id=claim.delivery_id,
        occurrence_at=claim.occurrence_at,
        status="fenced",
        outcome=post.outcome.value,
        error_code=post.code,
        slack_ts=post.ts,
        worker=claim.owner,
    )
    return Result.FENCED


def commit_while_leased(
    claim: C, commit: Callable[[C], None], still_ours: Callable[[C], C | None]
) -> bool:
    """Commit an outcome under the lease fence (`commit` conditions every write on the
    claim's update times). When a precondition fails only because an unrelated field
    changed (`still_ours` answers the claim with fresh update times), once more; False when
    the lease was taken over: the caller logs its late result as fenced. Shared by messages
    and rotation days."""
    for _ in range(2):
        try:
            commit(claim)
            return True
        except FailedPrecondition:
            fresh = still_ours(claim)
            if fresh is None:
                return False
            claim = fresh
    return False


Record = tuple[Claim, dict[str, Any], dict[str, Any]]  # a claim, its message and ledger update


def _commit(rt: Runtime, records: list[Record]) -> None:
    batch = rt.db.batch()
    for claim, message_update, ledger_update in records:
        batch.update(
            rt.db.collection(MESSAGES).document(claim.message.id),
            message_update,
            option=rt.db.write_option(last_update_time=claim.message_version),
        )
        batch.update(
            rt.db.collection(DELIVERIES).document(claim.delivery_id),
            ledger_update,
            option=rt.db.write_option(last_update_time=claim.ledger_version),
        )
    batch.commit()  # pragma: SYNCPOINT lease


def _still_ours(rt: Runtime, claim: Claim) -> Claim | None:
    message, ledger = read_in_order(
        rt.db,
        rt.db.collection(MESSAGES).document(claim.message.id),
        rt.db.collection(DELIVERIES).document(claim.delivery_id),
    )
    data, entry = message.to_dict() or {}, ledger.to_dict() or {}
    lease = data.get("lease") or {}
    ours = (
        data.get("status") == Status.SENDING
        and lease.get("owner") == claim.owner
        and lease.get("occurrence_at") == claim.occurrence_at
        and entry.get("status") == LedgerStatus.CLAIMED
        and entry.get("worker") == claim.owner
    )
    if not ours:
        return None
    return replace(claim, message_version=message.update_time, ledger_version=ledger.update_time)


def _updates(
    claim: Claim, post: PostResult, now: Any
) -> tuple[dict[str, Any], dict[str, Any], Result]:
    error = {"code": post.code, "message": post.detail, "at": now}
    if post.outcome is Outcome.DELIVERED:
        message = after_occurrence(claim.message, claim.occurrence_at) | {
            "last_slack_ts": post.ts,
            "last_sent_at": now,
            "sent_count": firestore.Increment(1),
            "last_error": firestore.DELETE_FIELD,
        }
        ledger = {"status": LedgerStatus.SENT, "slack_ts": post.ts, "sent_at": now}
        status = message["status"]
        result = {
            Status.SENT: Result.SENT,
            Status.RECURRING: Result.ADVANCED,
            Status.COMPLETED: Result.COMPLETED,
        }[status]
        return message, ledger, result
    if post.outcome is Outcome.FAILED:
        message = {
            "status": Status.FAILED,
            "lease": firestore.DELETE_FIELD,
            "last_error": error,
        }
        return message, {"status": LedgerStatus.FAILED, "error": error}, Result.FAILED
    if post.outcome is Outcome.RETRY_LATER:
        retry_at = now + timedelta(seconds=post.retry_after or DEFAULT_RETRY_AFTER)
        message = {
            "status": Status.RECURRING if claim.message.is_recurring else Status.PENDING,
            "next_run_at": retry_at,
            # Keeps the retry on the same ledger entry although next_run_at moved.
            "occurrence_at": claim.occurrence_at,
            "lease": firestore.DELETE_FIELD,
            "last_error": error,
        }
        ledger = {"status": LedgerStatus.RELEASED, "error": error, "retry_at": retry_at}
        return message, ledger, Result.RELEASED
    # Ambiguous: Slack may have posted it. Keep the claim (and its lease) so nobody resends
    # it blindly; reconciliation settles it once the lease has expired.
    return {"last_error": error}, {"error": error}, Result.AMBIGUOUS
