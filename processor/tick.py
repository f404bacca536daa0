"""One processing pass: expired leases settled, then every due message, oldest first, at
most TICK_LIMIT of them."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from core import logs
from core.errors import DocumentError
from core.models import Message
from core.runtime import Runtime
from core.store import due_messages
from formatting.slack_text import to_slack
from processor.claim import planned_occurrence
from processor.deliver import deliver_message
from processor.outcome import SUMMARY_KEYS, tally
from processor.pacing import ChannelPacer
from processor.reconcile import reconcile_expired


def run_tick(rt: Runtime, *, dry_run: bool = False) -> dict[str, Any]:
    """Settle expired leases, then deliver what is due: oldest first, paced per channel,
    within the pass's time budget."""
    now = rt.clock.now()
    if dry_run:
        due = due_messages(rt.db, now, rt.settings.tick_limit)
        return {
            **dict.fromkeys(SUMMARY_KEYS, 0),
            "dry_run": True,
            "due": len(due),
            "previews": preview_messages(due, now),
            "now": now.isoformat(),
        }
    counts = reconcile_expired(rt)
    due = due_messages(rt.db, now, rt.settings.tick_limit)
    pacer = ChannelPacer(rt.clock, timedelta(seconds=rt.settings.tick_budget_seconds))
    for snap in due:
        channel = (snap.to_dict() or {}).get("channel")
        if isinstance(channel, str) and not pacer.acquire(channel):
            counts["deferred"] += 1  # not claimed: the next pass takes it
            continue
        try:
            result, claimed = deliver_message(rt, snap)
        except Exception as exc:
            # One document's trouble (a Firestore hiccup mid-claim) never stops the pass;
            # anything it claimed stays under its lease for reconciliation.
            counts["errors"] += 1
            logs.error(
                "processing a message raised",
                message_id=snap.id,
                status="error",
                error_code=type(exc).__name__,
                error_message=str(exc),
            )
            continue
        counts["claimed"] += claimed
        tally(counts, result)
    summary: dict[str, Any] = {name: counts[name] for name in SUMMARY_KEYS}
    return {**summary, "dry_run": False, "due": len(due), "now": now.isoformat()}


def preview_messages(due: list[Any], now: datetime) -> list[dict[str, Any]]:
    """What a real pass would post, from the same rendering the send uses; writes nothing."""
    previews = []
    for snap in due:
        data = snap.to_dict() or {}
        if data.get("deleted"):
            continue
        entry: dict[str, Any] = {
            "kind": "message",
            "id": snap.id,
            "channel": data.get("channel"),
            "occurrence_at": None,
        }
        try:
            message = Message.from_document(snap.id, data)
            planned = planned_occurrence(message, data, now)
            entry["occurrence_at"] = planned.isoformat() if planned else None
            if planned is None:
                entry["skipped"] = True  # expired, or every due occurrence is past its grace
            rendered = to_slack(message.text, allow_broadcast=message.allow_broadcast)
        except DocumentError as exc:
            entry |= {"text": None, "error": {"code": exc.code, "message": exc.message}}
        else:
            entry["text"] = rendered.text
        previews.append(entry)
    return previews
