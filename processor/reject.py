"""A subject that cannot be sent as stored, whatever its kind: it is set aside with a code
saying why, and a person hears of it, rather than tried again on every pass."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from google.api_core.exceptions import FailedPrecondition

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
    kind: Kind[Any],
    snap: Snapshot,
    exc: DocumentError,
    *,
    status: enum.StrEnum,
    detail: str,
    occurrence_at: datetime | None = None,
) -> Result:
    """Set the subject `status` with `last_error` naming `exc`'s code, and escalate it with
    `detail`. It holds no claim (a subject under a usable lease is never rejected), so a
    `lease` no worker can hold goes too. Conditioned on the version read: a subject edited
    meanwhile is left to the next pass (DUPLICATE)."""
    now = rt.clock.now()
    try:
        error = StoredError(exc.code, exc.message, now)
        rejected = SubjectWrite(status=status, last_error=error, lease=DELETE).stamped(now)
        snap.reference.update(
            rejected.to_document(),
            option=rt.db.write_option(last_update_time=snap.update_time),
        )
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
