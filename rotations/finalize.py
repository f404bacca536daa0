"""Recording what a turn's post did, only while still holding the day's lease.

- Delivered: the day stays claimed; the lease and the rollback values go.
- Not delivered (rate limited, proven absent, or an explicit failure such as
  `channel_not_found`): the claim is rolled back (`last_processed_date`, `cursor` and
  `members` as they were), `last_error` says why, and the same local day is tried again
  after the wait: Slack's `Retry-After`, or 1, 2, 4... minutes (at most 60) after an
  explicit failure, so inviting the bot back brings today's turn.
- Every given-back day ends settled: `failed` once an explicit failure reaches
  MAX_ATTEMPTS, or `skipped` with `reason: day_ended` when the retry would fall on the next
  local day. A day left `released` by a clock that jumped past its end is closed the same
  way by the rotation's next claim (rotations.missed_days).
- Ambiguous: the claim and its lease stay; reconciliation settles it when the lease expires.
- Unverifiable under the `hold` policy: the day stays claimed, `unconfirmed` in the ledger.

A day is alerted once (`escalated_at` on its ledger entry), not on every try.
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
from processor.reconcile import backoff
from rotations.claim import DayClaim
from rotations.missed_days import DAY_ENDED


def finalize_day(rt: Runtime, claim: DayClaim, post: PostResult) -> Result:
    now = rt.clock.now()
    rotation_update, ledger_update, result = _updates(claim, post, now, rt.settings.max_attempts)
    if needs_alert(post, result) and not claim.escalated:
        ledger_update["escalated_at"] = now  # the day's one alert (deliver.report_day)
    return _apply(rt, claim, rotation_update, ledger_update, result, post)


def needs_alert(post: PostResult, result: Result) -> bool:
    """A day outcome a person must hear of: failed, unconfirmed, given back after an explicit
    failure (the bot may need inviting back), or ended unposted. Alerted once per day."""
    return result in (Result.FAILED, Result.UNCONFIRMED, Result.SKIPPED) or (
        result is Result.RELEASED and post.outcome is Outcome.FAILED
    )


def hold_day_unconfirmed(rt: Runtime, claim: DayClaim, code: str | None, detail: str) -> Result:
    """The post's outcome cannot be verified and policy forbids posting again: the day stays
    claimed (nobody else takes it) and a person settles it. `rollback` stays, so that an
    operator's release can give the member their turn back."""
    error = {"code": code, "message": detail, "at": rt.clock.now()}
    rotation = {"lease": firestore.DELETE_FIELD, "last_error": error}
    ledger = {"status": LedgerStatus.UNCONFIRMED, "error": error}
    post = PostResult(Outcome.AMBIGUOUS, code, detail=detail)
    return _apply(rt, claim, rotation, ledger, Result.UNCONFIRMED, post)


def day_ended_detail(post: PostResult) -> str:
    return f"{post.detail or post.code}; the local day ended before another try, not posted"


def _updates(
    claim: DayClaim, post: PostResult, now: datetime, max_attempts: int
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
    next_turn = claim.rotation.next_due_at(now, after=claim.day)
    if post.outcome is Outcome.FAILED and claim.attempts >= max_attempts:
        # Out of attempts: the day ends failed and the rotation moves on to its next turn
        # day; an edit of the rotation re-opens today (the same ledger entry, attempts + 1).
        ledger = {"status": LedgerStatus.FAILED, "error": error}
        return restored | {"next_run_at": next_turn}, ledger, Result.FAILED
    if post.outcome is Outcome.RETRY_LATER:
        wait = timedelta(seconds=post.retry_after or DEFAULT_RETRY_AFTER)
    else:
        wait = backoff(claim.attempts)  # an explicit failure (channel_not_found...): 1, 2, 4 min
    retry_at = now + wait
    if retry_at >= claim.rotation.day_ends_at(claim.day):
        # The retry would fall on the next local day, which has a turn of its own: the day
        # ends here, unposted, and the member keeps their place for the next turn.
        ended = error | {"message": day_ended_detail(post)}
        ledger = {"status": LedgerStatus.SKIPPED, "reason": DAY_ENDED, "error": ended}
        closed = restored | {"last_processed_date": claim.day.isoformat(), "next_run_at": next_turn}
        return closed, ledger, Result.SKIPPED
    ledger = {"status": LedgerStatus.RELEASED, "error": error, "retry_at": retry_at}
    return restored | {"next_run_at": retry_at}, ledger, Result.RELEASED


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
