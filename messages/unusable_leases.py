"""Messages `sending` under a lease that no pass can settle: a `lease` that is not a map, or
one without a timestamp `expires_at` (core.store.unusable_leases). Reconciliation would
never find them, so each pass fails them (`invalid_lease`), as a claim rejects a document it
cannot send."""

from __future__ import annotations

from collections import Counter

from core.documents.deliveries import LedgerField
from core.documents.leases import LEASE, invalid_lease, usable_lease
from core.runtime import Runtime
from core.store import Snapshot, unusable_leases
from messages.claim import reject_document
from processor.outcome import Result
from processor.reconcile import settle_each


def fail_unusable_leases(rt: Runtime) -> Counter[str]:
    snaps = unusable_leases(rt.db, rt.settings.tick_limit)
    return settle_each(snaps, lambda snap: _reject(rt, snap), LedgerField.MESSAGE_ID)


def _reject(rt: Runtime, snap: Snapshot) -> Result | None:
    lease = (snap.to_dict() or {}).get(LEASE)
    if usable_lease(lease):
        return None
    return reject_document(rt, snap, invalid_lease(lease), rt.clock.now())
