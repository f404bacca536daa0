"""Events `sending` under a lease that no pass can settle: a `lease` that is not a map, or one
without a timestamp `expires_at` (core.store.unusable_leases). Reconciliation would never
find them, so each pass fails them (`invalid_lease`), as a message's are
(messages.unusable_leases)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from core.documents.deliveries import LedgerField
from core.documents.events import EventStatus
from core.documents.leases import LEASE, invalid_lease, usable_lease
from core.runtime import Runtime
from core.store import EVENTS, Snapshot, unusable_leases
from processor.abc import Kind
from processor.outcome import Result
from processor.reconcile import settle_each
from processor.reject import reject


def fail_unusable_leases(rt: Runtime, kind: Kind[Any]) -> Counter[str]:
    snaps = unusable_leases(rt.db, rt.settings.tick_limit, EVENTS)
    return settle_each(snaps, lambda snap: _reject(rt, kind, snap), LedgerField.EVENT_ID)


def _reject(rt: Runtime, kind: Kind[Any], snap: Snapshot) -> Result | None:
    lease = (snap.to_dict() or {}).get(LEASE)
    if usable_lease(lease):
        return None
    exc = invalid_lease(lease)
    detail = f"cannot be sent as stored: {exc.message}"
    return reject(rt, kind, snap, exc, status=EventStatus.FAILED, detail=detail)
