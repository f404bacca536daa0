"""Ledger entries as first written: one shape for every entry of a kind (message occurrence,
rotation day), whatever its first status, and the question of which of some entries exist
already."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from google.cloud import firestore

from core.documents.deliveries import LedgerKind, LedgerWrite, Occurrence, new_entry
from core.models import Message
from core.rotation import Rotation
from core.runtime import Runtime


def message_entry(
    message: Message, occurrence: datetime, worker_id: str, write: LedgerWrite
) -> dict[str, Any]:
    """A message occurrence's ledger document as first written, with `write`'s fields."""
    identity = Occurrence(
        LedgerKind.MESSAGE, message.id, occurrence, message.channel, user=message.user
    )
    return new_entry(identity, worker_id, write)


def day_entry(rotation: Rotation, day: date, worker_id: str, write: LedgerWrite) -> dict[str, Any]:
    """A rotation day's ledger document as first written (claimed, or skipped)."""
    identity = Occurrence(
        LedgerKind.ROTATION, rotation.id, rotation.due_at(day), rotation.channel, day.isoformat()
    )
    return new_entry(identity, worker_id, write)


def existing_ids(rt: Runtime, refs: list[firestore.DocumentReference]) -> set[str]:
    return {doc.id for doc in rt.db.get_all(refs) if doc.exists}
