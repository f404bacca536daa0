"""What a message looks like once one of its occurrences is settled (delivered, or skipped
for good): a one-off is done, a series waits for its next occurrence or is completed. A
series stores its anchor (core.anchor) in the same write, so the next search starts near."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from core import logs
from core.documents.errors import StoredError
from core.documents.messages import MessageWrite, Status
from core.documents.write import DELETE, UNSET, Delete, Unset
from core.errors import DocumentError
from core.models import Message


def settled(message: Message, occurrence: datetime) -> MessageWrite:
    """The message once `occurrence` is settled: its lease, its pinned occurrence and its
    attempts cleared; a one-off `sent`, a series at its next occurrence or `completed`."""
    update = MessageWrite(lease=DELETE, occurrence_at=DELETE, attempts=0)
    if message.recurrence is None:
        return replace(update, status=Status.SENT)
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
        return replace(update, status=Status.FAILED, last_error=StoredError(exc.code, exc.message))
    update = replace(update, anchor=stored_anchor(anchored))
    if following is None:
        return replace(update, status=Status.COMPLETED)
    return replace(update, status=Status.RECURRING, next_run_at=following)


def stored_anchor(message: Message) -> dict[str, Any] | Delete | Unset:
    """The stored `anchor` of a series (unset for a one-off): where its rule restarts."""
    if message.recurrence is None:
        return UNSET
    anchor = message.recurrence.anchor
    return DELETE if anchor is None else anchor.to_fields()
