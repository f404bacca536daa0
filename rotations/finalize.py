"""Recording what a turn's post did, only while still holding the day's lease.

- Delivered: the day stays claimed; the lease and the rollback values go.
- Definitive failure: the claim is rolled back (`last_processed_date`, `cursor` and
  `members` as they were), `last_error` says why, and the day is not tried again by itself;
  an edit of the rotation (fixing the channel, say) opens it again.
- Rate limited, or proven not delivered: rolled back, and tried again after the wait.
- Ambiguous: the claim and its lease stay; reconciliation settles it when the lease expires.
- Unverifiable under the `hold` policy: the day stays claimed, `unconfirmed` in the ledger.

Each write is one batch over the rotation and its ledger entry conditioned on the update
times our claim left, as for messages: a worker whose lease was taken over cannot overwrite
what the new owner decided, and its late result is logged instead.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from google.cloud import firestore

from core import logs
from core.models import LedgerStatus
from core.runtime import Runtime
from core.slack import DEFAULT_RETRY_AFTER, Outcome, PostResult
from core.store import DELIVERIES, ROTATIONS, read_in_order
from processor.finalize import commit_while_leased
from processor.outcome import Result
from rotations.claim import DayClaim


def finalize_day(rt: Runtime, claim: DayClaim, post: PostResult) -> Result:
    rotation_update, ledger_update, result = _updates(claim, post, rt.clock.now())
    return _apply(rt, claim, rotation_update, ledger_update, result, post)


def hold_day_unconfirmed(rt: Runtime, claim: DayClaim, code: str | None, detail: str) -> Result:
    """The post's outcome cannot be verified and policy forbids posting again: the day stays
    claimed (nobody else takes it) and a person settles it. `rollback` stays, so that an
    operator's release can give the member their turn back."""
    error = {"code": code, "message": detail, "at": rt.clock.now()}
    rotation = {"lease": firestore.DELETE_FIELD, "last_error": error}
    ledger = {"status": LedgerStatus.UNCONFIRMED, "error": error}
    post = PostResult(Outcome.AMBIGUOUS, code, detail=detail)
    return _apply(rt, claim, rotation, ledger, Result.UNCONFIRMED, post)


def _updates(
    claim: DayClaim, post: PostResult, now: datetime
) -> tuple[dict[str, Any], dict[str, Any], Result]:
    error: dict[str, Any] = {"code": post.code, "message": post.detail, "at": now}
    if post.outcome is Outcome.DELIVERED:
        rotation = {
            "lease": firestore.DELETE_FIELD,
            "rollback": firestore.DELETE_FIELD,
            "last_error": firestore.DELETE_FIELD,
            "last_member": claim.member,
            "last_sent_at": now,
            "last_slack_ts": post.ts,
            "sent_count": firestore.Increment(1),
        }
        ledger: dict[str, Any] = {"status": LedgerStatus.SENT, "slack_ts": post.ts, "sent_at": now}
        return rotation, ledger, Result.SENT
    if post.outcome is Outcome.AMBIGUOUS:
        return {"last_error": error}, {"error": error}, Result.AMBIGUOUS
    restored: dict[str, Any] = {
        **claim.rollback,
        "lease": firestore.DELETE_FIELD,
        "rollback": firestore.DELETE_FIELD,
        "last_error": error,
    }
    if post.outcome is Outcome.RETRY_LATER:
        retry_at = now + timedelta(seconds=post.retry_after or DEFAULT_RETRY_AFTER)
        ledger = {"status": LedgerStatus.RELEASED, "error": error, "retry_at": retry_at}
        return restored | {"next_run_at": retry_at}, ledger, Result.RELEASED
    # Definitive: trying again in a minute would fail the same way. The day stays open for
    # an edit to retry; otherwise the rotation moves on to its next turn day.
    next_run_at = claim.rotation.next_due_at(now, after=claim.day)
    ledger = {"status": LedgerStatus.FAILED, "error": error}
    return restored | {"next_run_at": next_run_at}, ledger, Result.FAILED


def _apply(
    rt: Runtime,
    claim: DayClaim,
    rotation_update: dict[str, Any],
    ledger_update: dict[str, Any],
    result: Result,
    post: PostResult,
) -> Result:
    now = rt.clock.now()
    rotation_update |= {"updated_at": now, "version": firestore.Increment(1)}
    if commit_while_leased(
        claim,
        lambda c: _commit(rt, c, rotation_update, ledger_update),
        lambda c: _still_ours(rt, c),
    ):
        return result
    logs.error(
        "late result dropped: the lease was taken over before the outcome was recorded",
        rotation_id=claim.rotation.id,
        delivery_id=claim.delivery_id,
        occurrence_date=claim.day.isoformat(),
        status="fenced",
        outcome=post.outcome.value,
        error_code=post.code,
        slack_ts=post.ts,
        worker=claim.owner,
    )
    return Result.FENCED


def _commit(
    rt: Runtime, claim: DayClaim, rotation_update: dict[str, Any], ledger_update: dict[str, Any]
) -> None:
    batch = rt.db.batch()
    batch.update(
        rt.db.collection(ROTATIONS).document(claim.rotation.id),
        rotation_update,
        option=rt.db.write_option(last_update_time=claim.rotation_version),
    )
    batch.update(
        rt.db.collection(DELIVERIES).document(claim.delivery_id),
        ledger_update,
        option=rt.db.write_option(last_update_time=claim.ledger_version),
    )
    batch.commit()  # pragma: SYNCPOINT lease


def _still_ours(rt: Runtime, claim: DayClaim) -> DayClaim | None:
    rotation, ledger = read_in_order(
        rt.db,
        rt.db.collection(ROTATIONS).document(claim.rotation.id),
        rt.db.collection(DELIVERIES).document(claim.delivery_id),
    )
    data, entry = rotation.to_dict() or {}, ledger.to_dict() or {}
    lease = data.get("lease") or {}
    ours = (
        lease.get("owner") == claim.owner
        and lease.get("occurrence_date") == claim.day.isoformat()
        and entry.get("status") == LedgerStatus.CLAIMED
        and entry.get("worker") == claim.owner
    )
    if not ours:
        return None
    return replace(claim, rotation_version=rotation.update_time, ledger_version=ledger.update_time)
