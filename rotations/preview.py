"""What a pass would post for due rotations, from the same turn math and rendering the send
uses: the dry run's previews. Reads only."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.documents.deliveries import LedgerKind
from core.documents.leases import LEASE, check_lease
from core.documents.subjects import shown_destination
from core.errors import DocumentError
from core.rotation import Rotation, turn_for
from core.store import Snapshot
from rotations.render import render_turn


def preview_turns(due: list[Snapshot], now: datetime) -> list[dict[str, Any]]:
    """The turn each due rotation would post now; a rotation with no open turn is left out."""
    return [entry for snap in due if (entry := preview_due_turn(snap, now)) is not None]


def preview_due_turn(snap: Snapshot, now: datetime) -> dict[str, Any] | None:
    """What a pass would post for the rotation `snap` now: its turn (`skipped` when every
    member is out), or the error its claim would reject it with; None when no turn is open
    (not due after all, or the day is claimed and left to reconciliation)."""
    data = snap.to_dict() or {}
    entry: dict[str, Any] = {
        "kind": LedgerKind.ROTATION,
        "id": snap.id,
        **shown_destination(data),
    }
    try:
        check_lease(data.get(LEASE))
        if data.get(LEASE):
            return None  # a claimed day is settled by reconciliation, not posted again
        rotation = Rotation.from_document(snap.id, data)
    except DocumentError as exc:
        return entry | {
            "text": None,
            "occurrence_at": None,
            "error": {"code": exc.code, "message": exc.message},
        }
    if not rotation.is_due(now):
        return None
    today = rotation.today(now)
    turn = turn_for(rotation, today)
    entry |= {"occurrence_at": rotation.due_at(today).isoformat(), "occurrence_date": str(today)}
    if turn.member is None:
        return entry | {"text": None, "member": None, "skipped": True}
    return entry | {
        "member": turn.member,
        "text": render_turn(rotation.text, turn.member, rotation.platform).text,
    }
