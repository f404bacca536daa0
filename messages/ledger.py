"""A message occurrence's ledger entry as first written, whatever its first status (claimed,
skipped, failed)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.documents.deliveries import LedgerField, LedgerKind, LedgerWrite, Occurrence, new_entry
from core.models import Message


def message_entry(
    message: Message, occurrence: datetime, worker_id: str, write: LedgerWrite
) -> dict[str, Any]:
    """A message occurrence's ledger document as first written, with `write`'s fields."""
    identity = Occurrence(
        LedgerKind.MESSAGE,
        LedgerField.MESSAGE_ID,
        message.id,
        occurrence,
        message.channel,
        user=message.user,
        platform=message.platform,
    )
    return new_entry(identity, worker_id, write)
