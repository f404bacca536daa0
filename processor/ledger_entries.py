"""Ledger entries as first written: one shape for every entry, whatever its first status, and
the question of which of some entries exist already."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from google.cloud import firestore

from core.models import Message
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


def existing_ids(rt: Runtime, refs: list[firestore.DocumentReference]) -> set[str]:
    return {doc.id for doc in rt.db.get_all(refs) if doc.exists}
