"""The rotations' part of a processing pass: expired day leases settled, then every due
rotation's turn posted; or, in a dry run, what would be posted, from the same selection."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from typing import Any

from core import logs
from core.errors import DocumentError
from core.rotation import Rotation, turn_for
from core.runtime import Runtime
from core.store import Snapshot, due_rotations
from processor.outcome import tally
from processor.pacing import ChannelPacer
from rotations.deliver import deliver_day, render_turn
from rotations.reconcile import reconcile_rotations


def run_rotations(rt: Runtime) -> Counter[str]:
    """Settle expired day leases, then post every due turn, paced per channel."""
    counts = reconcile_rotations(rt)
    now = rt.clock.now()
    pacer = ChannelPacer(rt.clock, timedelta(seconds=rt.settings.tick_budget_seconds))
    for snap in due_rotations(rt.db, now, rt.settings.tick_limit):
        channel = (snap.to_dict() or {}).get("channel")
        if isinstance(channel, str) and not pacer.acquire(channel):
            counts["deferred"] += 1  # not claimed: the next pass takes it
            continue
        try:
            result, claimed = deliver_day(rt, snap)
        except Exception as exc:
            # Anything claimed stays under its lease for reconciliation.
            counts["errors"] += 1
            logs.error(
                "processing a rotation raised",
                rotation_id=snap.id,
                status="error",
                error_code=type(exc).__name__,
                error_message=str(exc),
            )
            continue
        counts["claimed"] += claimed
        tally(counts, result)
    return counts


def preview_rotations(rt: Runtime) -> list[dict[str, Any]]:
    """What a real pass would post for rotations now; reads only."""
    now = rt.clock.now()
    return [
        entry
        for snap in due_rotations(rt.db, now, rt.settings.tick_limit)
        if (entry := preview_due_turn(snap, now)) is not None
    ]


def preview_due_turn(snap: Snapshot, now: datetime) -> dict[str, Any] | None:
    data = snap.to_dict() or {}
    if data.get("lease"):
        return None  # a claimed day is settled by reconciliation, not posted again
    entry: dict[str, Any] = {"kind": "rotation", "id": snap.id, "channel": data.get("channel")}
    try:
        rotation = Rotation.from_document(snap.id, data)
    except DocumentError as exc:
        return entry | {
            "text": None,
            "occurrence_at": None,
            "error": {"code": exc.code, "message": exc.message},
        }
    if not rotation.is_due(now):
        return None
    today = rotation.today(now)
    turn = turn_for(rotation, today)
    entry |= {"occurrence_at": rotation.due_at(today).isoformat(), "occurrence_date": str(today)}
    if turn.member is None:
        return entry | {"text": None, "member": None, "skipped": True}
    return entry | {"member": turn.member, "text": render_turn(rotation.text, turn.member).text}
