"""`POST /messages/{id}/occurrence`: edit only one occurrence of a series.

The occurrence becomes an exdate of the series (its local wall-clock time in the series'
zone) and a new one-off takes its place: the same destination, category, buttons and
policies, with the edited `text` and `send_at` (by default the series' own), and `series_id`
naming the series. Both are written in one commit, the series under a precondition on the
version it was decided from, so the occurrence is either the series' or the one-off's, never
both and never neither. With an `Idempotency-Key` the commit records the key too: a retry with
the same key and body answers the first one's records, never a second one-off.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from google.api_core.exceptions import AlreadyExists, FailedPrecondition

from composer import idempotency
from composer.actor import updated_by
from composer.models import OccurrenceEdit
from composer.records import first_version
from composer.serialize import message_json
from composer.validation import Problems, check_text
from composer.versions import applied, read, version_of
from core import logs
from core.documents.messages import MessageField, MessageWrite, Status
from core.errors import Conflict, DocumentError, ValidationFailed
from core.models import Message
from core.runtime import Runtime
from core.schedule import Recurrence, recurrence_from_fields, to_local
from core.store import MESSAGES

SERIES_ID = "series_id"  # on the one-off: the series it was an occurrence of
_INSTANT = timedelta(microseconds=1)
_LOCAL = "%Y-%m-%dT%H:%M:%S"
_EDITABLE = (Status.RECURRING, Status.PAUSED)
# What the one-off keeps of the series, beyond its destination.
_KEPT = (
    MessageField.CATEGORY,
    MessageField.ACTIONS,
    MessageField.ONE_ANSWER,
    MessageField.ALLOW_BROADCAST,
    MessageField.ON_AMBIGUOUS,
    MessageField.TIMEZONE,
    MessageField.CHANNEL,
    MessageField.USER,
    MessageField.TEAMS_CONVERSATION,
)
_TRIES = 3


def edit_occurrence(
    rt: Runtime,
    message_id: str,
    edit: OccurrenceEdit,
    body: dict[str, Any],
    key: str | None,
    *,
    by: str | None = None,
) -> dict[str, Any]:
    """201's answer `{"series", "message"}`; a replayed key answers the records it made. The
    actor (`by`, else the request's principal: composer.actor) changed the series and made
    the one-off."""
    route = f"POST /messages/{message_id}/occurrence"
    for _ in range(_TRIES):
        fresh = None
        if key is not None:
            found = idempotency.look_up(rt.db, key, route, body, rt.clock.now())
            if isinstance(found, idempotency.Replay):
                return _answer(rt, message_id, found.target_id)
            fresh = found
        try:
            return _split(rt, message_id, edit, fresh, by)
        except (AlreadyExists, FailedPrecondition):
            continue  # the series changed, or a concurrent request used the key: again
    raise Conflict("the series kept changing while this request was deciding; try again")


def _split(
    rt: Runtime,
    message_id: str,
    edit: OccurrenceEdit,
    key: idempotency.Fresh | None,
    by: str | None,
) -> dict[str, Any]:
    now = rt.clock.now()
    series_ref = rt.db.collection(MESSAGES).document(message_id)
    snap = read(series_ref, "message")
    data = snap.to_dict() or {}
    recurrence, message = _series(message_id, data, edit.occurrence_at, now)
    exdates = [*(data.get(MessageField.EXDATES) or []), _local(edit.occurrence_at, recurrence)]
    series = _series_update(data, exdates, edit.occurrence_at, now) | updated_by(by)
    one_off_ref = rt.db.collection(MESSAGES).document()
    one_off = _one_off(rt, data, message, edit, one_off_ref.id, now, by)
    batch = rt.db.batch()
    batch.update(series_ref, series, option=rt.db.write_option(last_update_time=snap.update_time))
    batch.create(one_off_ref, one_off)
    if key is not None:
        idempotency.record(batch, key, one_off_ref.id, now)
    batch.commit()  # pragma: SYNCPOINT edit
    logs.info(
        "occurrence edited as a one-off",
        message_id=message_id,
        occurrence_at=edit.occurrence_at,
        one_off_id=one_off_ref.id,
        send_at=one_off[MessageField.SEND_AT],
    )
    return {
        "series": message_json(message_id, applied(data, series)),
        "message": message_json(one_off_ref.id, one_off),
    }


def _series(
    message_id: str, data: dict[str, Any], occurrence: datetime, now: datetime
) -> tuple[Recurrence, Message]:
    """The series and its rule, if `occurrence` is a future occurrence of it (422 naming
    `occurrence_at` otherwise; 409 naming `status` for a series not recurring or paused)."""
    status = data.get(MessageField.STATUS)
    try:
        recurrence = recurrence_from_fields(data)
        message = Message.from_document(message_id, data)
    except DocumentError as exc:
        raise Conflict(f"the stored message cannot be sent ({exc.code}): {exc.message}") from None
    if recurrence is None:
        raise _not_one("the message is a one-off: edit it instead")
    if data.get(MessageField.DELETED) is True or status not in _EDITABLE:
        raise Conflict(
            f"the series is {status}: only a recurring or paused series can be edited",
            [{"field": MessageField.STATUS.value, "message": str(status)}],
        )
    if occurrence <= now or recurrence.next_after(occurrence - _INSTANT) != occurrence:
        raise _not_one(f"{occurrence.isoformat()} is not a future occurrence of the series")
    if data.get(MessageField.OCCURRENCE_AT) == occurrence:
        raise Conflict("that occurrence is being sent or retried right now")
    return recurrence, message


def _series_update(
    data: dict[str, Any], exdates: list[str], occurrence: datetime, now: datetime
) -> dict[str, Any]:
    """The series without `occurrence`; `next_run_at` moves on when it was the next one."""
    try:
        without = recurrence_from_fields(data | {MessageField.EXDATES.value: exdates})
    except DocumentError as exc:
        raise Conflict(f"the series cannot take another exdate ({exc.code})") from None
    assert without is not None
    if without.next_after(occurrence - _INSTANT) == occurrence:
        raise _not_one("that occurrence was moved by working_days and cannot be edited alone")
    update = MessageWrite(exdates=exdates, updated_at=now, version=version_of(data) + 1)
    if data.get(MessageField.NEXT_RUN_AT) == occurrence:
        following = without.next_after(occurrence)
        if following is None:
            return update.to_document() | MessageWrite(status=Status.COMPLETED).to_document()
        return update.to_document() | MessageWrite(next_run_at=following).to_document()
    return update.to_document()


def _one_off(
    rt: Runtime,
    data: dict[str, Any],
    message: Message,
    edit: OccurrenceEdit,
    doc_id: str,
    now: datetime,
    by: str | None,
) -> dict[str, Any]:
    problems = Problems()
    text = edit.text if edit.text is not None else str(data.get(MessageField.TEXT, ""))
    check_text(problems, "text", text, message.platform)
    send_at = edit.send_at or edit.occurrence_at
    if send_at <= now:
        problems.add("send_at", "must be in the future")
    problems.raise_if_any()
    kept = {field.value: data[field] for field in _KEPT if field in data}
    fields = MessageWrite(
        text=text,
        send_at=send_at,
        status=Status.PENDING,
        next_run_at=send_at,
        deleted=False,
        attempts=0,
        sent_count=0,
        created_at=now,
    )
    first = first_version(rt, doc_id, now, by)
    return kept | fields.to_document() | first.to_document() | {SERIES_ID: message.id}


def _answer(rt: Runtime, series_id: str, one_off_id: str) -> dict[str, Any]:
    series = read(rt.db.collection(MESSAGES).document(series_id), "message")
    one_off = read(rt.db.collection(MESSAGES).document(one_off_id), "message")
    return {
        "series": message_json(series_id, series.to_dict() or {}),
        "message": message_json(one_off_id, one_off.to_dict() or {}),
    }


def _local(occurrence: datetime, recurrence: Recurrence) -> str:
    return to_local(occurrence, recurrence.tz).strftime(_LOCAL)


def _not_one(why: str) -> ValidationFailed:
    return ValidationFailed(why, [{"field": "occurrence_at", "message": why}])
