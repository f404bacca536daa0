"""`POST /messages/{id}/skip-next`: the message's next occurrence is left out.

A series gains the occurrence's local wall-clock time in `exdates` (so the rule itself no
longer yields it, whatever reads the schedule later: previews, the agenda, a resume) and
`next_run_at` moves to the occurrence after it (`completed` when there is none); a one-off
ends `cancelled`. A released occurrence waiting for its retry is settled `skipped` in the
ledger in the same commit (composer.messages.abandoned_retry). Decided and written like every
edit: on a fresh read, under a precondition on it, `If-Match` honoured."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from composer.messages import abandoned_retry
from composer.serialize import message_json
from composer.versions import Decision, check_if_match, decide_and_write, version_of
from core import logs
from core.documents.messages import WAITING, MessageField, MessageWrite, Status
from core.documents.write import DELETE
from core.errors import Conflict, DocumentError
from core.rules import MAX_EXDATES
from core.runtime import Runtime
from core.schedule import recurrence_from_fields, to_local
from core.store import MESSAGES
from messages.claim import occurrence_of

_LOCAL = "%Y-%m-%dT%H:%M:%S"
_INSTANT = timedelta(microseconds=1)


def skip_next(
    rt: Runtime, message_id: str, if_match: int | None, *, by: str | None = None
) -> dict[str, Any]:
    def decide(data: dict[str, Any]) -> Decision:
        check_if_match(data, if_match)
        status = data.get(MessageField.STATUS)
        if data.get(MessageField.DELETED) is True or status not in WAITING:
            raise Conflict(
                f"the message is {status}: only a pending or recurring message has a next "
                "occurrence to skip",
                [{"field": MessageField.STATUS.value, "message": str(status)}],
            )
        now = rt.clock.now()
        skipped = _skipped(data)
        update = (
            skipped.to_document()
            | MessageWrite(
                occurrence_at=DELETE, updated_at=now, version=version_of(data) + 1
            ).to_document()
        )
        return Decision(update, abandoned_retry(rt, message_id, data, update, now))

    reference = rt.db.collection(MESSAGES).document(message_id)
    after = decide_and_write(rt.db, reference, "message", decide, by)
    logs.info(
        "next occurrence skipped",
        message_id=message_id,
        status=after.get(MessageField.STATUS),
        next_run_at=after.get(MessageField.NEXT_RUN_AT),
        version=after.get(MessageField.VERSION),
    )
    return message_json(message_id, after)


def _skipped(data: dict[str, Any]) -> MessageWrite:
    """The series without its next occurrence, or the one-off cancelled."""
    try:
        occurrence = occurrence_of(data)
        series = recurrence_from_fields(data)
        if series is None:
            return MessageWrite(status=Status.CANCELLED)
        exdates = [*(data.get(MessageField.EXDATES) or []), _local(occurrence, series.tz)]
        if len(exdates) > MAX_EXDATES:
            raise Conflict(f"the series lists {MAX_EXDATES} exdates already: edit its rule")
        without = recurrence_from_fields(data | {MessageField.EXDATES.value: exdates})
    except DocumentError as exc:
        raise Conflict(f"the stored schedule is invalid ({exc.code}): {exc.message}") from None
    assert without is not None
    if without.next_after(occurrence - _INSTANT) == occurrence:
        raise Conflict(
            "the next occurrence was moved by working_days and cannot be left out alone",
            [{"field": MessageField.OCCURRENCE_AT.value, "message": occurrence.isoformat()}],
        )
    following = without.next_after(occurrence)
    if following is None:
        return MessageWrite(status=Status.COMPLETED, exdates=exdates)
    return MessageWrite(exdates=exdates, next_run_at=following)


def _local(occurrence: datetime, tz: Any) -> str:
    return to_local(occurrence, tz).strftime(_LOCAL)
