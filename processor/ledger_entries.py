"""Ledger entries as first written: one shape for every entry of a kind (message occurrence,
rotation day), whatever its first status, and the question of which of some entries exist
already."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from google.cloud import firestore

from core.models import Message
from core.rotation import Rotation
from core.runtime import Runtime


def new_ledger_entry(
    message: Message, occurrence: datetime, worker_id: str, **fields: Any
) -> dict[str, Any]:
    """A ledger document as first written, whatever its first status: one shape for every
    entry, so a listing or an operator never meets a field missing on some of them."""
    return {
        "kind": "message",
        "message_id": message.id,
        "occurrence_at": occurrence,
        "channel": message.channel,
        "worker": worker_id,
        "attempts": 0,
        "claimed_at": None,
        "slack_ts": None,
        "sent_at": None,
        "error": None,
        **fields,
    }


def new_day_entry(rotation: Rotation, day: date, worker_id: str, **fields: Any) -> dict[str, Any]:
    """A rotation day's ledger document as first written (claimed, or skipped)."""
    return {
        "kind": "rotation",
        "rotation_id": rotation.id,
        "occurrence_date": day.isoformat(),
        "occurrence_at": rotation.due_at(day),
        "channel": rotation.channel,
        "member": None,
        "worker": worker_id,
        "attempts": 0,
        "slack_ts": None,
        "sent_at": None,
        "error": None,
        **fields,
    }


def existing_ids(rt: Runtime, refs: list[firestore.DocumentReference]) -> set[str]:
    return {doc.id for doc in rt.db.get_all(refs) if doc.exists}
