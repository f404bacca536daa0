"""`publish_marks/{kind}-{shard}`: how far the scan of one (kind, shard) has published its
due documents under DISPATCH=pubsub (processor.scan), so that each occurrence is published
once rather than by every tick while it waits. Our addition (docs/data-model.md)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from core.documents.write import Write
from core.store import Snapshot


class MarkField(enum.StrEnum):
    # The scan published every waiting document due up to `through` (a `next_run_at`) ...
    THROUGH = "through"
    # ... and, due exactly at `through`, those whose id is up to `after_id` ("": all of them).
    AFTER_ID = "after_id"
    SWEPT_AT = "swept_at"  # when the scan last swept what is long overdue
    # Firestore's read time of the mark when the scan that wrote it began: a document
    # unchanged since then was seen by that scan's queries (None: none may be assumed seen).
    SEEN_BEFORE = "seen_before"
    UPDATED_AT = "updated_at"


def mark_id(kind: str, shard: int) -> str:
    return f"{kind}-{shard}"


@dataclass(frozen=True)
class PublishMark:
    """A stored mark, as the scan reads it."""

    through: datetime
    after_id: str
    swept_at: datetime
    seen_before: datetime | None

    @classmethod
    def of(cls, snap: Snapshot) -> PublishMark | None:
        """The mark a snapshot holds; None when there is none, or one no scan wrote (a
        mark written by hand that does not parse is rewritten by the next scan)."""
        data = snap.to_dict() or {}
        through, swept_at = data.get(MarkField.THROUGH), data.get(MarkField.SWEPT_AT)
        after_id, seen = data.get(MarkField.AFTER_ID), data.get(MarkField.SEEN_BEFORE)
        if not (isinstance(through, datetime) and isinstance(swept_at, datetime)):
            return None
        return cls(
            through,
            after_id if isinstance(after_id, str) else "",
            swept_at,
            seen if isinstance(seen, datetime) else None,
        )


@dataclass(frozen=True, kw_only=True)
class MarkWrite(Write):
    """A mark as a scan writes it (whole)."""

    through: datetime
    after_id: str
    swept_at: datetime
    seen_before: datetime | None
    updated_at: datetime
