"""Reconciliation of rotation days whose lease expired while claimed: the same questions to
Slack's history as for messages (processor.reconcile.verdict), answered for a day.

Found: delivered with that `ts`. Absent: rolled back and tried again after a backoff, up to
MAX_ATTEMPTS, then failed. Unreadable: the rotation's `on_ambiguous` (`hold` by default keeps
the day claimed as `unconfirmed`; `retry` treats it as absent). History briefly unavailable:
asked again when the reconciler's own lease runs out.
"""

from __future__ import annotations

from collections import Counter
from datetime import date, datetime
from typing import Any

from core import logs
from core.errors import DocumentError
from core.models import LedgerStatus, rotation_delivery_id
from core.rotation import Rotation
from core.runtime import Runtime
from core.slack import Outcome
from core.store import DELIVERIES, Snapshot, expired_rotation_leases
from processor.outcome import Result
from processor.reconcile import CLOCK_SKEW, settle_each, take_over_lease, verdict
from rotations.claim import DayClaim
from rotations.deliver import report_day
from rotations.finalize import finalize_day, hold_day_unconfirmed


def reconcile_rotations(rt: Runtime) -> Counter[str]:
    snaps = expired_rotation_leases(rt.db, rt.clock.now(), rt.settings.tick_limit)
    return settle_each(snaps, lambda snap: reconcile_day(rt, snap), "rotation_id")


def reconcile_day(rt: Runtime, snap: Snapshot) -> Result | None:
    """Settle one expired rotation lease; None when it could not be settled this time."""
    data = snap.to_dict() or {}
    lease = data.get("lease") or {}
    try:
        rotation = Rotation.from_document(snap.id, data)
        day = date.fromisoformat(str(lease.get("occurrence_date")))
    except (DocumentError, ValueError) as exc:
        logs.error(
            "a claimed rotation day no longer parses; held for an operator",
            rotation_id=snap.id,
            status="error",
            error_code=getattr(exc, "code", "invalid_lease"),
            error_message=str(exc),
        )
        return None
    taken = _take_over(rt, snap, rotation, day, lease, data.get("rollback"))
    if taken is None:
        return Result.DUPLICATE
    claim, claimed_at = taken
    lookup = rt.slack.find_delivery(
        rotation.channel,
        claim.delivery_id,
        oldest=claimed_at - CLOCK_SKEW,
        latest=rt.clock.now() + CLOCK_SKEW,
    )
    post = verdict(
        lookup, data.get("on_ambiguous", "hold"), claim.attempts, rt.settings.max_attempts
    )
    if post is None:
        logs.warning(
            "Slack history could not be read now; asking again later",
            rotation_id=rotation.id,
            delivery_id=claim.delivery_id,
            occurrence_date=day.isoformat(),
            status="sending",
            error_code=lookup.code,
        )
        return None
    if post.outcome is Outcome.AMBIGUOUS:
        result = hold_day_unconfirmed(rt, claim, post.code, post.detail)
    else:
        result = finalize_day(rt, claim, post)
    report_day(rt, claim, post, result)
    return result


def _take_over(
    rt: Runtime,
    snap: Snapshot,
    rotation: Rotation,
    day: date,
    lease: dict[str, Any],
    rollback: Any,
) -> tuple[DayClaim, datetime] | None:
    """Take the expired lease over (processor.reconcile.take_over_lease): that fences the
    old worker, whose late finalize now fails its preconditions."""
    ledger_ref = rt.db.collection(DELIVERIES).document(rotation_delivery_id(rotation.id, day))
    ledger = ledger_ref.get()
    entry = ledger.to_dict() or {}
    if entry.get("status") != LedgerStatus.CLAIMED or not isinstance(rollback, dict):
        logs.error(
            "a claimed rotation day has no claimed ledger entry; held for an operator",
            rotation_id=rotation.id,
            delivery_id=ledger_ref.id,
            occurrence_date=day.isoformat(),
            status="error",
            error_code="ledger_mismatch",
            ledger_status=entry.get("status"),
        )
        return None
    taken = take_over_lease(rt, snap, ledger)
    if taken is None:
        return None
    _, results = taken
    claim = DayClaim(
        rotation,
        day,
        str(lease.get("member") or entry.get("member")),
        ledger_ref.id,
        int(entry.get("attempts") or 1),
        rt.worker_id,
        rotation.due_at(day),
        rollback,
        results[0].update_time,
        results[1].update_time,
    )
    claimed_at = entry.get("claimed_at")
    return claim, claimed_at if isinstance(claimed_at, datetime) else claim.due_at
