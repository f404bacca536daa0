"""Pause and resume a message (`POST /messages/{id}/pause`, `/resume`).

A paused message is never claimed. Resuming recomputes `next_run_at` from now: a series goes
on with its first occurrence at or after the resume instant, and the occurrences that fell
inside the pause are neither sent nor recorded; a one-off goes out at its `send_at`, or now
if that has passed (unless it expired meanwhile, which the processor then reports). Both are
decided and written like every edit: on a fresh read, under a precondition on it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from google.cloud import firestore

from composer.messages import abandoned_retry
from composer.serialize import as_json
from composer.versions import Decision, check_if_match, decide_and_write, version_of
from core import logs
from core.documents.messages import Status
from core.errors import Conflict, DocumentError
from core.runtime import Runtime
from core.schedule import recurrence_from_fields, resume_next_run_at
from core.store import MESSAGES

PAUSABLE = (Status.PENDING, Status.RECURRING)


def pause_message(rt: Runtime, message_id: str, if_match: int | None) -> dict[str, Any]:
    def decide(data: dict[str, Any]) -> Decision | None:
        check_if_match(data, if_match)
        if data.get("status") == Status.PAUSED:
            return None  # pausing twice changes nothing
        _require(data, PAUSABLE, "paused")
        now = rt.clock.now()
        update = {
            "status": Status.PAUSED,
            "occurrence_at": firestore.DELETE_FIELD,
            "updated_at": now,
            "version": version_of(data) + 1,
        }
        return Decision(update, abandoned_retry(rt, message_id, data, update, now))

    return _write(rt, message_id, decide, "message paused")


def resume_message(rt: Runtime, message_id: str, if_match: int | None) -> dict[str, Any]:
    def decide(data: dict[str, Any]) -> Decision:
        check_if_match(data, if_match)
        _require(data, (Status.PAUSED,), "resumed")
        now = rt.clock.now()
        update: dict[str, Any] = {"attempts": 0, "updated_at": now, "version": version_of(data) + 1}
        return Decision(update | _next_run(data, now))

    return _write(rt, message_id, decide, "message resumed")


def _next_run(data: dict[str, Any], now: datetime) -> dict[str, Any]:
    try:
        recurrence = recurrence_from_fields(data)
        following = None if recurrence is None else resume_next_run_at(recurrence, now)
    except DocumentError as exc:
        raise Conflict(f"the stored schedule is invalid ({exc.code}): {exc.message}") from None
    if recurrence is None:
        send_at = data.get("send_at")
        due = max(send_at, now) if isinstance(send_at, datetime) else now
        return {"status": Status.PENDING, "next_run_at": due}
    if following is None:
        return {"status": Status.COMPLETED}  # the series ended while it was paused
    return {"status": Status.RECURRING, "next_run_at": following}


def _require(data: dict[str, Any], allowed: tuple[str, ...], verb: str) -> None:
    if data.get("deleted") is True or data.get("status") not in allowed:
        raise Conflict(
            f"the message is {data.get('status')} and cannot be {verb}",
            [{"field": "status", "message": str(data.get("status"))}],
        )


def _write(rt: Runtime, message_id: str, decide: Any, event: str) -> dict[str, Any]:
    reference = rt.db.collection(MESSAGES).document(message_id)
    after = decide_and_write(rt.db, reference, "message", decide)
    logs.info(
        event,
        message_id=message_id,
        status=after.get("status"),
        next_run_at=after.get("next_run_at"),
        version=after.get("version"),
    )
    return as_json(message_id, after)
