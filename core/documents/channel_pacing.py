"""`channel_pacing/{channel}:{minute}`: when a channel may next be posted to, and by whom
(processor.channel_slots)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from core.documents.write import Write


class PacingField(enum.StrEnum):
    NEXT_POST_AT = "next_post_at"
    WORKER = "worker"
    UPDATED_AT = "updated_at"
    EXPIRES_AT = "expires_at"  # a TTL policy deletes the slot then


@dataclass(frozen=True, kw_only=True)
class SlotWrite(Write):
    """A slot as a claim writes it (whole)."""

    next_post_at: datetime
    worker: str
    updated_at: datetime
    expires_at: datetime
