"""What a pass would post for due messages, from the same rendering the send uses: the dry
run's previews. Reads only."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.documents.deliveries import LedgerKind
from core.documents.messages import MessageField
from core.errors import DocumentError
from core.models import Message
from formatting.slack_text import to_slack
from messages.claim import planned_occurrence


def preview_messages(due: list[Any], now: datetime) -> list[dict[str, Any]]:
    """What a real pass would post, from the same rendering the send uses; writes nothing."""
    previews = []
    for snap in due:
        data = snap.to_dict() or {}
        if data.get(MessageField.DELETED):
            continue
        entry: dict[str, Any] = {
            "kind": LedgerKind.MESSAGE,
            "id": snap.id,
            "channel": data.get(MessageField.CHANNEL),
            "occurrence_at": None,
        }
        if data.get(MessageField.USER) is not None:
            # Their DM: opened by the real send's claim, never by a dry run.
            entry["user"] = data[MessageField.USER]
        try:
            message = Message.from_document(snap.id, data)
            planned = planned_occurrence(message, data, now)
            entry["occurrence_at"] = planned.isoformat() if planned else None
            if planned is None:
                entry["skipped"] = True  # expired, or every due occurrence is past its grace
            rendered = to_slack(message.text, allow_broadcast=message.allow_broadcast)
        except DocumentError as exc:
            entry |= {"text": None, "error": {"code": exc.code, "message": exc.message}}
        else:
            entry["text"] = rendered.text
        previews.append(entry)
    return previews
