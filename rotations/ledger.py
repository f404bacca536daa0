"""A rotation day's ledger entry as first written (claimed, or skipped)."""

from __future__ import annotations

from datetime import date
from typing import Any

from core.documents.deliveries import LedgerField, LedgerKind, LedgerWrite, Occurrence, new_entry
from core.rotation import Rotation


def day_entry(rotation: Rotation, day: date, worker_id: str, write: LedgerWrite) -> dict[str, Any]:
    """A rotation day's ledger document as first written, with `write`'s fields."""
    identity = Occurrence(
        LedgerKind.ROTATION,
        LedgerField.ROTATION_ID,
        rotation.id,
        rotation.due_at(day),
        rotation.channel,
        day.isoformat(),
        platform=rotation.platform,
    )
    return new_entry(identity, worker_id, write)
