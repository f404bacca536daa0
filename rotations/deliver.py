"""One rotation day, end to end: claim -> post the turn -> record what happened."""

from __future__ import annotations

from core.runtime import Runtime
from core.store import Snapshot
from processor.abc import Claim
from processor.channel_slots import Slot
from processor.deliver import report_outcome, send
from processor.finalize import finalize
from processor.outcome import Result
from rotations.claim import claim_day
from rotations.kind import DayTurn


def deliver_day(
    rt: Runtime, snap: Snapshot, slots: tuple[Slot, ...] = ()
) -> tuple[Result, Claim[DayTurn] | None]:
    """What happened, and this worker's claim of the day if it made one (with `slots`, the
    claim took the channel's pacing slots too)."""
    claim = claim_day(rt, snap, slots)
    if not isinstance(claim, Claim):
        return claim, None
    post = send(rt, claim)  # pragma: SYNCPOINT claimed
    result = finalize(rt, claim, post)
    report_outcome(rt, claim, post, result)
    return result, claim
