"""What the operator's `doctor` finds in a rotation (processor.doctor): a status the
processor does not know, a claimed day whose lease reconciliation can never settle, a
rotation the processor rejects, or one the due query never finds (`--fix`: now; the
processor computes the real turn)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.documents.leases import LEASE, LeaseField
from core.documents.rotations import RotationField, RotationStatus
from core.errors import DocumentError
from core.rotation import Rotation
from core.store import ROTATIONS
from processor.doctor import Finding, lease_finding, rejected, unknown_status, unscheduled


def examine_rotation(doc_id: str, data: dict[str, Any], now: datetime) -> Finding | None:
    status = data.get(RotationField.STATUS)
    if not isinstance(status, str) or status not in frozenset(RotationStatus):
        return unknown_status(ROTATIONS, doc_id, status, frozenset(RotationStatus))
    if data.get(LEASE):  # a claimed day (the claim skips it): reconciliation settles it
        return lease_finding(ROTATIONS, doc_id, data.get(LEASE), LeaseField.OCCURRENCE_DATE)
    if status == RotationStatus.PAUSED:
        return None
    try:
        Rotation.from_document(doc_id, data)
    except DocumentError as exc:
        return rejected(ROTATIONS, doc_id, exc)
    if isinstance(data.get(RotationField.NEXT_RUN_AT), datetime):
        return None
    return unscheduled(ROTATIONS, doc_id, data, now)
