"""What a pass would post for due messages, from the same rendering the send uses: the dry
run's previews, each with the gate that would hold it back (`held_back`: processor.gates, the
function the claim runs, on the same documents, played forward in due order as the pass's
claims would reserve them). Reads only: the due page, then one batched read of the gates'
documents and the planned occurrences' ledger entries."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.documents.deliveries import LedgerField, LedgerKind
from core.documents.messages import MessageField
from core.documents.subjects import shown_destination
from core.errors import DocumentError
from core.models import Message, message_delivery_id
from core.runtime import Runtime
from core.store import DELIVERIES
from formatting.render import render
from messages.claim import planned_occurrence
from processor.gates import held_back, read_gates


def preview_messages(rt: Runtime, due: list[Any], now: datetime) -> list[dict[str, Any]]:
    """What a real pass would post, from the same rendering the send uses; writes nothing."""
    previews = [_preview(snap, now) for snap in due]
    # What a claim would send, in due order (a person's messages are claimed in that order).
    planned = [(entry, m, at) for entry, m, at in previews if m is not None and at is not None]
    gates = read_gates(rt.db, [message for _, message, _ in planned])
    ids = [message_delivery_id(m.id, at) for _, m, at in planned if m.user is not None]
    entries = {snap.id: snap.to_dict() or {} for snap in _ledger(rt, ids)}
    for entry, message, at in planned:
        if message.user is None:
            continue
        delivery_id = message_delivery_id(message.id, at)
        status = entries.get(delivery_id, {}).get(LedgerField.STATUS)
        try:
            reason = held_back(message, at, delivery_id, gates.docs(message), now, status)
        except DocumentError as exc:  # its category cannot be read: the claim fails it
            entry |= {"text": None, "error": {"code": exc.code, "message": exc.message}}
            continue
        entry["held_back"] = reason
        if reason is None:
            gates.assume_sent(message, at, delivery_id, now)
    return [entry for entry, _, _ in previews if entry]


def _ledger(rt: Runtime, ids: list[str]) -> list[Any]:
    refs = [rt.db.collection(DELIVERIES).document(i) for i in ids]
    return [snap for snap in rt.db.get_all(refs) if snap.exists] if refs else []


def _preview(snap: Any, now: datetime) -> tuple[dict[str, Any], Message | None, datetime | None]:
    """One due message's preview (empty: a deleted one, never previewed), the message and
    the occurrence a claim would send (None: none)."""
    data = snap.to_dict() or {}
    if data.get(MessageField.DELETED):
        return {}, None, None
    entry: dict[str, Any] = {
        "kind": LedgerKind.MESSAGE,
        "id": snap.id,
        **shown_destination(data),
        "occurrence_at": None,
    }
    if data.get(MessageField.USER) is not None:
        # Their DM: opened by the real send's claim, never by a dry run.
        entry["user"] = data[MessageField.USER]
    if data.get(MessageField.TEAMS_CONVERSATION) is not None:
        entry["teams_conversation"] = data[MessageField.TEAMS_CONVERSATION]  # posted on Teams
    try:
        message = Message.from_document(snap.id, data)
        planned = planned_occurrence(message, data, now)
        entry["occurrence_at"] = planned.isoformat() if planned else None
        if planned is None:
            entry["skipped"] = True  # expired, or every due occurrence is past its grace
        rendered = render(message.platform, message.text, allow_broadcast=message.allow_broadcast)
    except DocumentError as exc:
        entry |= {"text": None, "error": {"code": exc.code, "message": exc.message}}
        return entry, None, None
    entry["text"] = rendered.text
    return entry, message, planned
