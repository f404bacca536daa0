"""A rotation's `up`: who takes today's turn and who the next one, worked out from the
stored document by the turn math the send uses (`core.rotation.upcoming_turns`), so what an
answer or a list shows is what the send would do. Reads nothing beyond the document."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from core.documents.leases import LEASE, LeaseField
from core.documents.rotations import RotationField, RotationStatus
from core.errors import DocumentError
from core.rotation import Rotation, upcoming_turns

UP = "up"


def with_up(rotation_id: str, data: dict[str, Any], now: datetime) -> dict[str, Any]:
    """The stored fields and `up` (left out for a document the send could not take turns
    with: the answer's `last_error`, or the next pass, says why)."""
    try:
        rotation = Rotation.from_document(rotation_id, data)
    except DocumentError:
        return data
    return data | {UP: up_of(rotation, data, now)}


def up_of(rotation: Rotation, data: dict[str, Any], now: datetime) -> dict[str, Any]:
    """`today`: on a turn day, who took today's turn (a claimed or posted day) or will (an
    open one; null member: everyone is out). `next`: the first turn after today's, with
    when it is due; null while paused or when no turn day comes within a year."""
    today = rotation.today(now)
    active = data.get(RotationField.STATUS) == RotationStatus.ACTIVE
    turns = upcoming_turns(rotation, now, 2) if active else []
    up: dict[str, Any] = {"today": None, "next": None}
    if turns and turns[0].day == today:
        up["today"] = {"date": today.isoformat(), "member": turns.pop(0).member}
    elif rotation.is_turn_day(today) and rotation.last_processed_date == today:
        up["today"] = {"date": today.isoformat(), "member": _taken_by(data, rotation, today)}
    if turns:
        turn = turns[0]
        at = rotation.due_at(turn.day)
        up["next"] = {"date": turn.day.isoformat(), "at": at, "member": turn.member}
    return up


def _taken_by(data: dict[str, Any], rotation: Rotation, today: date) -> str | None:
    """Who today's claimed turn names: the lease's member while it is being posted, else
    the last member posted if that post was today (null: today was skipped, everyone out)."""
    lease = data.get(LEASE)
    if isinstance(lease, dict) and isinstance(lease.get(LeaseField.MEMBER), str):
        return str(lease[LeaseField.MEMBER])
    sent_at = data.get(RotationField.LAST_SENT_AT)
    member = data.get(RotationField.LAST_MEMBER)
    if isinstance(sent_at, datetime) and rotation.today(sent_at) == today:
        return member if isinstance(member, str) else None
    return None
