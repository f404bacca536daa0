"""Reconciliation of rotation days whose lease expired while claimed: the same questions to
Slack's history as for messages (processor.reconcile.verdict), answered for a day.

Found: delivered with that `ts`. Absent: rolled back and tried again after a backoff, up to
MAX_ATTEMPTS, then failed. Unreadable: the rotation's `on_ambiguous` (`hold` by default keeps
the day claimed as `unconfirmed`; `retry` treats it as absent). Not settled this pass (a rate
limit, a 5xx, pages left to read): its search kept for a later pass (processor.history_search),
escalated once after an hour. A lease that cannot be settled (the rotation no longer parses,
its ledger entry is not `claimed`) is held for a person (processor.held).
"""

from __future__ import annotations

from collections import Counter
from datetime import date
from typing import Any

from core.errors import DocumentError
from core.models import LedgerStatus, rotation_delivery_id
from core.rotation import Rotation
from core.runtime import Runtime
from core.slack import Outcome
from core.store import DELIVERIES, Snapshot, expired_rotation_leases
from processor.abc import Claim
from processor.deliver import report_outcome
from processor.finalize import finalize, hold_unconfirmed
from processor.held import hold_lease
from processor.history_search import HistoryBudget, ask_history, searchable
from processor.outcome import Result
from processor.reconcile import settle_each, take_over_lease, verdict
from rotations.kind import ROTATION_DAY_KIND, DayTurn


def reconcile_rotations(rt: Runtime, budget: HistoryBudget | None = None) -> Counter[str]:
    budget = budget or HistoryBudget.for_pass(rt)
    snaps = expired_rotation_leases(rt.db, rt.clock.now(), rt.settings.tick_limit)
    budget.expect(len(snaps))
    return settle_each(snaps, lambda snap: reconcile_day(rt, snap, budget), "rotation_id")


def reconcile_day(rt: Runtime, snap: Snapshot, budget: HistoryBudget) -> Result | None:
    """Settle one expired rotation lease; None when it is not settled this pass."""
    data = snap.to_dict() or {}
    lease = data.get("lease") or {}
    calls = budget.share()
    try:
        rotation = Rotation.from_document(snap.id, data)
        day = date.fromisoformat(str(lease.get("occurrence_date")))
    except (DocumentError, ValueError) as exc:
        code = exc.code if isinstance(exc, DocumentError) else "invalid_lease"
        detail = f"a claimed rotation day no longer parses: {exc}"
        hold_lease(rt, snap, code, detail, rotation_id=snap.id)
        return None
    if calls == 0:
        return None  # this pass's history calls are spent: a later pass asks
    ledger = _claimed_entry(rt, snap, rotation, day)
    if ledger is None:
        return None
    search = searchable(rt, ledger.to_dict() or {}, rotation.due_at(day))
    if search is None:
        return None  # the post may still be on its way: read the window once it has closed
    claim = _take_over(rt, snap, ledger, rotation, day, lease, data)
    if claim is None:
        return Result.DUPLICATE
    lookup = ask_history(
        rt,
        budget,
        calls,
        rotation.channel,
        search,
        ((snap.reference, claim.subject_version), (ledger.reference, claim.ledger_version)),
        delivery_id=claim.delivery_id,
        occurrence_at=claim.occurrence_at,
        rotation_id=rotation.id,
        occurrence_date=day.isoformat(),
    )
    post = verdict(
        lookup, data.get("on_ambiguous", "hold"), claim.attempts, rt.settings.max_attempts
    )
    if post is None:
        return None
    if post.outcome is Outcome.AMBIGUOUS:
        result = hold_unconfirmed(rt, claim, post.code, post.detail)
    else:
        result = finalize(rt, claim, post)
    report_outcome(rt, claim, post, result)
    return result


def _claimed_entry(rt: Runtime, snap: Snapshot, rotation: Rotation, day: date) -> Snapshot | None:
    """The day's ledger entry, if it is `claimed`; otherwise the lease is held for a person
    (processor.held) and None."""
    ledger = rt.db.collection(DELIVERIES).document(rotation_delivery_id(rotation.id, day)).get()
    status = (ledger.to_dict() or {}).get("status")
    if status == LedgerStatus.CLAIMED:
        return ledger
    hold_lease(
        rt,
        snap,
        "ledger_mismatch",
        f"a claimed rotation day's ledger entry is {status!r}, not claimed",
        occurrence_at=rotation.due_at(day),
        rotation_id=rotation.id,
        delivery_id=ledger.id,
        occurrence_date=day.isoformat(),
        ledger_status=status,
    )
    return None


def _take_over(
    rt: Runtime,
    snap: Snapshot,
    ledger: Snapshot,
    rotation: Rotation,
    day: date,
    lease: dict[str, Any],
    data: dict[str, Any],
) -> Claim[DayTurn] | None:
    """Take the expired lease over (processor.reconcile.take_over_lease): that fences the
    old worker, whose late finalize now fails its preconditions."""
    taken = take_over_lease(rt, snap, ledger)
    if taken is None:
        return None
    _, results = taken
    entry = ledger.to_dict() or {}
    member = str(lease.get("member") or entry.get("member"))
    turn = DayTurn(rotation, day, member, _rollback(data), entry.get("escalated_at") is not None)
    return Claim(
        ROTATION_DAY_KIND,
        turn,
        rotation.id,
        rotation.due_at(day),
        ledger.id,
        int(entry.get("attempts") or 1),
        rt.worker_id,
        results[0].update_time,
        results[1].update_time,
    )


def _rollback(data: dict[str, Any]) -> dict[str, Any]:
    """What giving the day back restores. A lease without `rollback` (one repaired from
    its ledger entry before the repair kept it) restores the order as it stands and no
    `last_processed_date`, so the day is open again and nothing else is."""
    rollback = data.get("rollback")
    if isinstance(rollback, dict):
        return rollback
    return {
        "last_processed_date": None,
        "cursor": data.get("cursor", 0),
        "members": data.get("members"),
    }
