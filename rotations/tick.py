"""The rotations' part of a processing pass: expired day leases settled, then every due
rotation's turn posted; or, in a dry run, what would be posted, from the same selection."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from typing import Any

from core import logs
from core.documents.deliveries import LedgerKind
from core.documents.leases import LEASE, check_lease
from core.documents.rotations import RotationField
from core.errors import DocumentError
from core.rotation import Rotation, turn_for
from core.runtime import Runtime
from core.store import Snapshot, due_rotations
from processor.channel_slots import ChannelSlots, slot_channel
from processor.deliver import deliver_one
from processor.history_search import HistoryBudget
from processor.outcome import Result, tally
from processor.pacing import ChannelPacer
from processor.reconcile import reconcile_kind
from rotations.kind import ROTATION_DAY_KIND
from rotations.render import render_turn


def run_rotations(rt: Runtime, history: HistoryBudget | None = None) -> Counter[str]:
    """Settle expired day leases, then post every due turn, paced per channel: within the
    pass, with this process's recent posts (the messages' part of the pass comes next), and
    across workers through the channels' pacing slots, as messages are. `history`: the
    pass's budget of Slack history calls (processor.history_search)."""
    counts = reconcile_kind(rt, ROTATION_DAY_KIND, history)
    now = rt.clock.now()
    pacer = ChannelPacer(
        rt.clock, timedelta(seconds=rt.settings.tick_budget_seconds), rt.recent_posts
    )
    slots = ChannelSlots(rt)
    for snap in due_rotations(rt.db, now, rt.settings.tick_limit):
        channel = (snap.to_dict() or {}).get(RotationField.CHANNEL)
        if not isinstance(channel, str):
            channel = None  # the claim rejects the document, with its code
        # A claim lost to another worker is tried once more, on the day as it is now and at
        # the channel slot's time: it lost only the slot if another worker posted a message
        # to the channel this minute.
        for attempt in range(2):
            result = _deliver_paced(rt, snap, channel, pacer, slots, counts, reread=attempt > 0)
            if result is not Result.DUPLICATE or slot_channel(channel) is None:
                break
    return counts


def _deliver_paced(
    rt: Runtime,
    snap: Snapshot,
    channel: str | None,
    pacer: ChannelPacer,
    slots: ChannelSlots,
    counts: Counter[str],
    *,
    reread: bool = False,
) -> Result | None:
    """Claim and post one due turn once its channel's pace allows (`reread`: the rotation
    read again first); None when it was deferred or raised (counted either way)."""
    now = rt.clock.now()
    slotted = slot_channel(channel)
    if slotted is not None and (at := slots.next_post_at(slotted, now)) is not None:
        pacer.hold(slotted, at)
    if channel is not None and not pacer.acquire(channel):
        counts["deferred"] += 1  # not claimed: the next pass takes it
        return None
    started = rt.clock.now()
    taken = slots.for_claim(slotted, started, more=False) if slotted else ()
    try:
        if reread:
            snap = snap.reference.get()
        result, claim = deliver_one(rt, ROTATION_DAY_KIND, snap, taken)
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
        return None
    if claim is not None:
        slots.claimed(taken, claim.slot_versions, started)
        if channel is not None:
            pacer.answered(channel, rt.clock.now())  # posted, answered and recorded
        counts["claimed"] += 1
    elif result is Result.DUPLICATE and taken:
        slots.lost(taken, rt.clock.now())
    tally(counts, result)
    return result


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
    entry: dict[str, Any] = {
        "kind": LedgerKind.ROTATION,
        "id": snap.id,
        "channel": data.get(RotationField.CHANNEL),
    }
    try:
        check_lease(data.get(LEASE))
        if data.get(LEASE):
            return None  # a claimed day is settled by reconciliation, not posted again
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
