"""What a message looks like once one of its occurrences is settled (delivered, or skipped
for good): a one-off is done, a series waits for its next occurrence or is completed. A
series stores its anchor (core.anchor) in the same write, so the next search starts near."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from google.cloud import firestore

from core import logs
from core.documents.messages import Status
from core.errors import DocumentError
from core.models import Message


def after_occurrence(message: Message, occurrence: datetime) -> dict[str, Any]:
    update: dict[str, Any] = {
        "lease": firestore.DELETE_FIELD,
        "occurrence_at": firestore.DELETE_FIELD,
        "attempts": 0,
    }
    if message.recurrence is None:
        return update | {"status": Status.SENT}
    # From the series' start, never from now: a late tick cannot drift the series. If that
    # occurrence is already past (a repair, a long retry), the next claim's catch-up decides
    # whether it is still sent or recorded as missed (processor/claim.py).
    try:
        anchored = message.reanchored(occurrence)
        following = anchored.recurrence.next_after(occurrence) if anchored.recurrence else None
    except DocumentError as exc:  # past the rule's evaluation budget: the series ends here
        logs.error(
            "a series' next occurrence cannot be found",
            message_id=message.id,
            error_code=exc.code,
            error_message=exc.message,
        )
        error = {"code": exc.code, "message": exc.message}
        return update | {"status": Status.FAILED, "last_error": error}
    update |= anchor_field(anchored)
    if following is None:
        return update | {"status": Status.COMPLETED}
    return update | {"status": Status.RECURRING, "next_run_at": following}


def anchor_field(message: Message) -> dict[str, Any]:
    """The stored `anchor` of a series (nothing for a one-off): where its rule restarts."""
    if message.recurrence is None:
        return {}
    anchor = message.recurrence.anchor
    return {"anchor": firestore.DELETE_FIELD if anchor is None else anchor.to_fields()}
