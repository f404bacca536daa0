"""A subject that cannot be sent as stored, whatever its kind: it is set aside with a code
saying why, and a person hears of it, rather than tried again on every pass."""

from __future__ import annotations

import enum
from datetime import datetime

from google.api_core.exceptions import FailedPrecondition

from core.documents.deliveries import LedgerStatus, LedgerWrite
from core.documents.errors import StoredError
from core.documents.subjects import SubjectWrite
from core.documents.write import DELETE
from core.errors import DocumentError
from core.runtime import Runtime
from core.store import Snapshot
from processor.abc import Kind
from processor.escalate import escalate
from processor.outcome import Result


def reject(
    rt: Runtime,
    kind: Kind,
    snap: Snapshot,
    exc: DocumentError,
    *,
    status: enum.StrEnum,
    detail: str,
    occurrence_at: datetime | None = None,
    entry: Snapshot | None = None,
) -> Result:
    """Set the subject `status` with `last_error` naming `exc`'s code, and escalate it with
    `detail`. It holds no claim (a subject under a usable lease is never rejected), so a
    `lease` no worker can hold goes too. Conditioned on the version read: a subject edited
    meanwhile is left to the next pass (DUPLICATE). For a kind whose ledger entry alone
    fences it (`Kind.fences_subject` false: an event), `entry` is that entry as read: it ends
    `failed` too, in the same batch, under its version instead, as every change of such a
    subject's owner is written, so no pass with an older read claims it after."""
    now = rt.clock.now()
    error = StoredError(exc.code, exc.message, now)
    rejected = SubjectWrite(status=status, last_error=error, lease=DELETE).stamped(now)
    batch = rt.db.batch()
    if entry is None:
        option = rt.db.write_option(last_update_time=snap.update_time)
        batch.update(snap.reference, rejected.to_document(), option=option)
    else:
        batch.update(snap.reference, rejected.to_document())
        failed = LedgerWrite(status=LedgerStatus.FAILED, error=error)
        option = rt.db.write_option(last_update_time=entry.update_time)
        batch.update(entry.reference, failed.to_document(), option=option)
    try:
        batch.commit()
    except FailedPrecondition:
        return Result.DUPLICATE
    escalate(
        rt,
        status="failed",
        occurrence_at=occurrence_at,
        error_code=exc.code,
        detail=detail,
        **{kind.id_field: snap.id},
    )
    return Result.FAILED
