"""How a rotation's lease of a claimed day reads: the day it names, the turn a reconciler
takes over, whether it is still a claim's own, and what `fail-held` gives up."""

from __future__ import annotations

from datetime import date
from typing import Any

from core.documents.deliveries import LedgerField
from core.documents.errors import StoredError
from core.documents.leases import LEASE, LeaseField, lease_of
from core.documents.rotations import RotationField, RotationWrite
from core.documents.write import DELETE, UNSET
from core.errors import DocumentError
from core.models import rotation_delivery_id
from core.rotation import Rotation
from processor.abc import Claim, Doc, Leased, LeaseUnreadable
from rotations.day import DayTurn


def leased_day(subject_id: str, data: Doc) -> Leased:
    """The day an expired lease names; LeaseUnreadable when it cannot be read."""
    day = _leased_day(subject_id, data)
    rotation = Rotation.from_document(subject_id, data)
    fields = {LedgerField.OCCURRENCE_DATE.value: day.isoformat()}
    return Leased(rotation.due_at(day), rotation_delivery_id(subject_id, day), fields)


def taken_over_day(subject_id: str, data: Doc, leased: Leased, entry: Doc) -> DayTurn:
    """A reconciler's claim of the day: its member and rollback as the claim stored them."""
    rotation = Rotation.from_document(subject_id, data)
    lease = data.get(LEASE) or {}
    member = str(lease.get(LeaseField.MEMBER) or entry.get(LedgerField.MEMBER))
    day = date.fromisoformat(leased.fields[LedgerField.OCCURRENCE_DATE])
    escalated = entry.get(LedgerField.ESCALATED_AT) is not None
    return DayTurn(rotation, day, member, _rollback(data), escalated)


def still_leased_day(claim: Claim[DayTurn], subject: Doc) -> bool:
    """Whether the stored rotation still shows this claim's lease of its day."""
    lease = subject.get(LEASE) or {}
    return bool(
        lease.get(LeaseField.OWNER) == claim.owner
        and lease.get(LeaseField.OCCURRENCE_DATE) == claim.subject.day.isoformat()
    )


def given_up(doc_id: str, data: Doc, error: StoredError) -> tuple[RotationWrite, str | None]:
    """What `fail-held` writes on a rotation whose claimed day it ends: the day is given
    up (`last_processed_date` stays on it, the order goes on with the next turn); and the
    day's ledger id, when the lease names a day."""
    day = lease_of(data).get(LeaseField.OCCURRENCE_DATE)
    write = RotationWrite(
        lease=DELETE,
        last_error=error,
        rollback=DELETE,
        last_processed_date=day if isinstance(day, str) else UNSET,
    )
    try:
        return write, rotation_delivery_id(doc_id, date.fromisoformat(str(day)))
    except ValueError:
        return write, None


def _leased_day(subject_id: str, data: dict[str, Any]) -> date:
    """The lease's day, once the rotation is known to parse (LeaseUnreadable otherwise)."""
    try:
        Rotation.from_document(subject_id, data)
        return date.fromisoformat(str((data.get(LEASE) or {}).get(LeaseField.OCCURRENCE_DATE)))
    except (DocumentError, ValueError) as exc:
        code = exc.code if isinstance(exc, DocumentError) else "invalid_lease"
        raise LeaseUnreadable(code, f"a claimed rotation day no longer parses: {exc}") from None


def _rollback(data: dict[str, Any]) -> dict[str, Any]:
    """What giving the day back restores: the `rollback` stored beside the lease (every
    claim and repair writes both; rotations.claim.DayPlan)."""
    rollback = data.get(RotationField.ROLLBACK)
    return rollback if isinstance(rollback, dict) else {}
