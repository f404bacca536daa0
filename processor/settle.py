"""The operator's settle actions on one ledger entry, whatever its kind:

- `mark_delivered`: a person saw the occurrence in the channel (it is `unconfirmed`, failed
  or stuck): it is finalized as delivered with that `ts`, and never sent again;
- `release`: a person knows it did not go out: it is claimed again by the next pass,
  through the same ledger entry.

Both record who, when and why on the ledger entry, refuse an occurrence whose lease is still
live (a worker is sending it right now), and act only on the occurrence the subject is on
now; the kind says what each action writes and refuses what its rules forbid
(`Kind.settle_writes`). The subject and the entry are written in one batch, each
conditioned on the version read, so a settle racing a worker or an edit fails instead of
overwriting it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from core import logs
from core.documents.deliveries import LedgerField, LedgerStatus, OperatorRecord
from core.documents.leases import LeaseField, lease_of
from core.errors import AppError
from core.runtime import Runtime
from core.store import DELIVERIES
from processor.abc import Settle, Settles
from processor.held import refuse_live

# Ledger statuses a person may settle (a kind may refuse some: Kind.settle_writes).
NEEDS_A_PERSON = (LedgerStatus.CLAIMED, LedgerStatus.UNCONFIRMED, LedgerStatus.FAILED)


class SettleRefused(AppError):
    """An operator action that cannot be applied; the message says why."""


def settle(rt: Runtime, kinds: Sequence[Settles], action: Settle) -> None:
    """Apply `action` to its ledger entry; SettleRefused when it cannot be."""
    if not action.reason.strip():
        raise SettleRefused("a reason is required: it is recorded on the ledger entry")
    now, delivery_id = action.at, action.delivery_id
    ledger_ref = rt.db.collection(DELIVERIES).document(delivery_id)
    ledger = ledger_ref.get()
    entry = ledger.to_dict()
    if entry is None:
        raise SettleRefused(f"no delivery {delivery_id!r}")
    kind = _kind_of(kinds, delivery_id, entry)
    _refuse_unless_settleable(delivery_id, entry, now)
    subject_ref = rt.db.collection(kind.collection).document(str(entry.get(kind.id_field)))
    snap = subject_ref.get()
    data = snap.to_dict()
    if data is None:
        raise SettleRefused(f"{kind.name} {snap.id!r} of {delivery_id!r} is gone")
    writes = kind.settle_writes(rt, action, entry, data)
    refuse_live(SettleRefused, f"delivery {delivery_id!r}", lease_of(data), now)
    record = OperatorRecord(action.name, action.reason, action.by, now)
    batch = rt.db.batch()
    batch.update(
        subject_ref,
        writes.subject.stamped(now).to_document(),
        option=rt.db.write_option(last_update_time=snap.update_time),
    )
    batch.update(
        ledger_ref,
        replace(writes.ledger, operator=record).to_document(),
        option=rt.db.write_option(last_update_time=ledger.update_time),
    )
    batch.commit()
    logs.warning(
        f"operator {action.name}",
        delivery_id=delivery_id,
        **{kind.id_field: snap.id},
        occurrence_at=entry.get(LedgerField.OCCURRENCE_AT),
        **_day_field(entry),
        status=writes.ledger.status,
        reason=action.reason,
        by=action.by,
    )


def _day_field(entry: dict[str, Any]) -> dict[str, Any]:
    """A rotation day's `occurrence_date`, for the log line (a message's entry has none)."""
    day = LedgerField.OCCURRENCE_DATE
    return {day.value: entry[day]} if day in entry else {}


def _kind_of(kinds: Sequence[Settles], delivery_id: str, entry: dict[str, Any]) -> Settles:
    name = entry.get(LedgerField.KIND)
    for kind in kinds:
        if kind.name == name:
            return kind
    raise SettleRefused(f"delivery {delivery_id!r} is of kind {name!r}, which has no settle")


def _refuse_unless_settleable(delivery_id: str, entry: dict[str, Any], now: datetime) -> None:
    status = entry.get(LedgerField.STATUS)
    if status not in NEEDS_A_PERSON:
        raise SettleRefused(f"delivery {delivery_id!r} is {status!r}: nothing to settle")
    if status == LedgerStatus.CLAIMED:
        lease = {LeaseField.EXPIRES_AT.value: entry.get(LedgerField.LEASE_EXPIRES_AT)}
        refuse_live(SettleRefused, f"delivery {delivery_id!r}", lease, now)
