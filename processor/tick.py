"""One processing pass: every due message, oldest first, at most TICK_LIMIT of them."""

from __future__ import annotations

from collections import Counter
from typing import Any

from core import logs
from core.errors import DocumentError
from core.models import Message
from core.runtime import Runtime
from core.store import due_messages
from formatting.slack_text import to_slack
from processor.claim import occurrence_of
from processor.deliver import deliver_message
from processor.outcome import Result

# The contract's summary counts, always present so a dashboard never sees a missing key.
_COUNTS = (
    "sent",
    "failed",
    "claimed",
    "advanced",
    "completed",
    "skipped",
    "duplicates",
    "released",
    "ambiguous",
    "reconciled",
    "errors",
)


def run_tick(rt: Runtime, *, dry_run: bool = False) -> dict[str, Any]:
    now = rt.clock.now()
    due = due_messages(rt.db, now, rt.settings.tick_limit)
    if dry_run:
        previews = preview_messages(due)
        return {
            **dict.fromkeys(_COUNTS, 0),
            "dry_run": True,
            "due": len(due),
            "previews": previews,
            "now": now.isoformat(),
        }
    counts: Counter[str] = Counter()
    for snap in due:
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
        counts["sent"] += result.delivered
        if result in _COUNT_OF:
            counts[_COUNT_OF[result]] += 1
    summary: dict[str, Any] = {name: counts[name] for name in _COUNTS}
    return {**summary, "dry_run": False, "due": len(due), "now": now.isoformat()}


# Every delivered occurrence counts in `sent`; these say more about what happened.
_COUNT_OF = {
    Result.ADVANCED: "advanced",
    Result.COMPLETED: "completed",
    Result.FAILED: "failed",
    Result.RELEASED: "released",
    Result.AMBIGUOUS: "ambiguous",
    Result.DUPLICATE: "duplicates",
    Result.SKIPPED: "skipped",
    Result.FENCED: "duplicates",
}


def preview_messages(due: list[Any]) -> list[dict[str, Any]]:
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
            entry["occurrence_at"] = occurrence_of(data).isoformat()
        except DocumentError as exc:
            entry |= {"text": None, "error": {"code": exc.code, "message": exc.message}}
        else:
            entry["text"] = to_slack(message.text, allow_broadcast=message.allow_broadcast).text
        previews.append(entry)
    return previews
