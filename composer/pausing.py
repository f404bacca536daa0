"""Pause and resume a message (`POST /messages/{id}/pause`, `/resume`).

A paused message is never claimed. Resuming recomputes `next_run_at` from now: a series goes
on with its first occurrence at or after the resume instant, and the occurrences that fell
inside the pause are neither sent nor recorded; a one-off goes out at its `send_at`, or now
if that has passed (unless it expired meanwhile, which the processor then reports). Both are
decided and written like every edit: on a fresh read, under a precondition on it."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from composer.messages import abandoned_retry
from composer.serialize import message_json
from composer.versions import Decision, check_if_match, decide_and_write, version_of
from core import logs
from core.documents.messages import MessageField, MessageWrite, Status
from core.documents.write import DELETE
from core.errors import Conflict, DocumentError
from core.runtime import Runtime
from core.schedule import recurrence_from_fields, resume_next_run_at
from core.store import MESSAGES

PAUSABLE = (Status.PENDING, Status.RECURRING)


def pause_message(
    rt: Runtime, message_id: str, if_match: int | None, *, by: str | None = None
) -> dict[str, Any]:
    def decide(data: dict[str, Any]) -> Decision | None:
        check_if_match(data, if_match)
        if data.get(MessageField.STATUS) == Status.PAUSED:
            return None  # pausing twice changes nothing
        _require(data, PAUSABLE, "paused")
        now = rt.clock.now()
        update = MessageWrite(
            status=Status.PAUSED,
            occurrence_at=DELETE,
            updated_at=now,
            version=version_of(data) + 1,
        ).to_document()
        return Decision(update, abandoned_retry(rt, message_id, data, update, now))

    return _write(rt, message_id, decide, "message paused", by)


def resume_message(
    rt: Runtime, message_id: str, if_match: int | None, *, by: str | None = None
) -> dict[str, Any]:
    def decide(data: dict[str, Any]) -> Decision:
        check_if_match(data, if_match)
        _require(data, (Status.PAUSED,), "resumed")
        now = rt.clock.now()
        update = replace(
            _next_run(data, now), attempts=0, updated_at=now, version=version_of(data) + 1
        )
        return Decision(update.to_document())

    return _write(rt, message_id, decide, "message resumed", by)


def _next_run(data: dict[str, Any], now: datetime) -> MessageWrite:
    try:
        recurrence = recurrence_from_fields(data)
        following = None if recurrence is None else resume_next_run_at(recurrence, now)
    except DocumentError as exc:
        raise Conflict(f"the stored schedule is invalid ({exc.code}): {exc.message}") from None
    if recurrence is None:
        send_at = data.get(MessageField.SEND_AT)
        due = max(send_at, now) if isinstance(send_at, datetime) else now
        return MessageWrite(status=Status.PENDING, next_run_at=due)
    if following is None:
        return MessageWrite(status=Status.COMPLETED)  # the series ended while it was paused
    return MessageWrite(status=Status.RECURRING, next_run_at=following)


def _require(data: dict[str, Any], allowed: tuple[str, ...], verb: str) -> None:
    status = data.get(MessageField.STATUS)
    if data.get(MessageField.DELETED) is True or status not in allowed:
        raise Conflict(
            f"the message is {status} and cannot be {verb}",
            [{"field": MessageField.STATUS.value, "message": str(status)}],
        )


def _write(rt: Runtime, message_id: str, decide: Any, event: str, by: str | None) -> dict[str, Any]:
    reference = rt.db.collection(MESSAGES).document(message_id)
    after = decide_and_write(rt.db, reference, "message", decide, by)
    logs.info(
        event,
        message_id=message_id,
        status=after.get(MessageField.STATUS),
        next_run_at=after.get(MessageField.NEXT_RUN_AT),
        version=after.get(MessageField.VERSION),
    )
    return message_json(message_id, after)
