"""Scheduled messages through the API: create, read, edit in place, cancel.

Edits and cancels are decided on a fresh read and written under a precondition on it
(`composer.versions.decide_and_write`), so against the processor's claim an edit either
lands first (and the send uses it) or sees the claim and answers 409.

What each status allows:
- `pending`, `recurring`, `paused`: edit and cancel.
- `failed`: edit re-arms it (back to `pending`/`recurring`, `last_error` cleared); cancel.
- `sending`: neither (409): the occurrence is in flight.
- `sent`, `completed`, `unconfirmed`: neither (409): what happened is history, and
  re-arming could post a second time; create a new message instead.
- `cancelled` (or `deleted: true`): edit 409; cancel again is a no-op answering the record.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from google.cloud import firestore

from composer import idempotency
from composer.categories import check_category_exists
from composer.models import MessageDraft, MessageEdit
from composer.records import Records
from composer.serialize import message_json
from composer.teams_destination import check_installed
from composer.validation import (
    MESSAGE_FIELDS,
    MessagePlan,
    check_message,
    schedule_key,
    validated,
)
from composer.versions import (
    Along,
    Decision,
    check_if_match,
    content_update,
    decide_and_write,
    merge_edit,
    version_of,
)
from core import logs
from core.documents.deliveries import LedgerField, LedgerReason, LedgerStatus, LedgerWrite
from core.documents.messages import MessageField, MessageWrite, Status
from core.documents.write import DELETE
from core.errors import Conflict
from core.models import message_delivery_id
from core.runtime import Runtime
from core.store import DELIVERIES, MESSAGES

_NOT_EDITABLE: dict[str, str] = {
    Status.SENDING: "it is being sent right now; try again once the send has settled",
    Status.SENT: "it was already sent; create a new message instead",
    Status.COMPLETED: "its series is completed; create a new message instead",
    Status.UNCONFIRMED: "its last send could not be verified; settle that first",
    Status.CANCELLED: "it was cancelled; create a new message instead",
}
_NOT_CANCELLABLE: dict[str, str] = {
    status: why for status, why in _NOT_EDITABLE.items() if status != Status.CANCELLED
}
# (`channel`, `user` or `teams_conversation`: one of them is, which check_message says.)
_REQUIRED = (MessageField.TEXT.value,)
# What the processor's stored `anchor` (core.anchor) was computed from.
_RULE_FIELDS = (MessageField.RRULE, MessageField.DTSTART, MessageField.TIMEZONE)


MESSAGE_RECORDS = Records(MESSAGES, "message", message_json)


def create_message(
    rt: Runtime, draft: MessageDraft, key: idempotency.Fresh | None = None, *, by: str | None = None
) -> dict[str, Any]:
    """`by`: who creates it (a Slack user id from Slack); None: the request's principal."""
    now = rt.clock.now()
    plan = check_message(draft, now, schedule_from_now=True)
    check_category_exists(rt.db, draft.category)
    check_installed(rt.db, draft.teams_conversation, draft.user)
    reference = MESSAGE_RECORDS.new(rt)
    fields = MessageWrite(
        status=_waiting_status(plan),
        next_run_at=plan.first_run,
        deleted=False,
        attempts=0,
        sent_count=0,
        created_at=now,
    )
    doc = MESSAGE_RECORDS.create(rt, reference, plan.content | fields.to_document(), key, now, by)
    logs.info(
        "message created",
        message_id=reference.id,
        status=doc[MessageField.STATUS],
        next_run_at=doc[MessageField.NEXT_RUN_AT],
        channel=doc.get(MessageField.CHANNEL),
        user=doc.get(MessageField.USER),
        teams_conversation=doc.get(MessageField.TEAMS_CONVERSATION),
    )
    return message_json(reference.id, doc)


def edit_message(
    rt: Runtime, message_id: str, edit: MessageEdit, if_match: int | None, *, by: str | None = None
) -> dict[str, Any]:
    check_category_exists(rt.db, edit.category)

    def decide(data: dict[str, Any]) -> Decision:
        _refuse(data, _NOT_EDITABLE, "edited")
        if data.get(MessageField.DELETED) is True:
            raise Conflict("the message was deleted and cannot be edited")
        check_if_match(data, if_match)
        now = rt.clock.now()
        update = _edited(data, edit, now)
        teams, person = update.get(MessageField.TEAMS_CONVERSATION), update.get(MessageField.USER)
        check_installed(
            rt.db,
            teams if isinstance(teams, str) else None,
            person if isinstance(person, str) else None,
        )
        return Decision(update, abandoned_retry(rt, message_id, data, update, now))

    return MESSAGE_RECORDS.edit(rt, message_id, decide, by)


def cancel_message(
    rt: Runtime, message_id: str, if_match: int | None, *, by: str | None = None
) -> dict[str, Any]:
    def decide(data: dict[str, Any]) -> Decision | None:
        _refuse(data, _NOT_CANCELLABLE, "cancelled")
        check_if_match(data, if_match)
        if (
            data.get(MessageField.STATUS) == Status.CANCELLED
            and data.get(MessageField.DELETED) is True
        ):
            return None  # cancelling twice changes nothing
        now = rt.clock.now()
        update = MessageWrite(
            status=Status.CANCELLED,
            deleted=True,
            occurrence_at=DELETE,
            updated_at=now,
            version=version_of(data) + 1,
        ).to_document()
        return Decision(update, abandoned_retry(rt, message_id, data, update, now))

    reference = rt.db.collection(MESSAGES).document(message_id)
    after = decide_and_write(rt.db, reference, "message", decide, by)
    logs.info("message cancelled", message_id=message_id, version=after.get(MessageField.VERSION))
    return message_json(message_id, after)


def _refuse(data: dict[str, Any], refused: dict[str, str], verb: str) -> None:
    status = data.get(MessageField.STATUS)
    if isinstance(status, str) and status in refused:
        raise Conflict(
            f"the message is {status} and cannot be {verb}: {refused[status]}",
            [{"field": MessageField.STATUS.value, "message": status}],
        )


def _edited(data: dict[str, Any], edit: MessageEdit, now: datetime) -> dict[str, Any]:
    """The update an edit makes to the stored `data` (422 if the result is invalid)."""
    _, merged = merge_edit(data, edit, MESSAGE_FIELDS, _REQUIRED)
    draft = validated(MessageDraft, merged)
    # Only a changed schedule is recomputed from now; a text edit keeps the occurrence.
    rescheduled = schedule_key(merged) != schedule_key(data) or not isinstance(
        data.get(MessageField.NEXT_RUN_AT), datetime
    )
    plan = check_message(draft, now, schedule_from_now=rescheduled)
    update = content_update(data, plan.content, MESSAGE_FIELDS)
    status = data.get(MessageField.STATUS)
    rearm = status == Status.FAILED
    system = MessageWrite(updated_at=now, version=version_of(data) + 1)
    if rescheduled:
        # A released retry's pinned occurrence belongs to the old schedule.
        system = replace(system, next_run_at=plan.first_run, occurrence_at=DELETE, attempts=0)
    if MessageField.ANCHOR in data and any(merged.get(n) != data.get(n) for n in _RULE_FIELDS):
        system = replace(system, anchor=DELETE)  # it belongs to the old rule
    if (rescheduled or rearm) and status != Status.PAUSED:
        system = replace(system, status=_waiting_status(plan))
    if rearm:
        system = replace(system, last_error=DELETE, attempts=0)
    return update | system.to_document()


def abandoned_retry(
    rt: Runtime, message_id: str, data: dict[str, Any], update: dict[str, Any], now: datetime
) -> tuple[Along, ...]:
    """A released occurrence waiting for its retry (`occurrence_at`) that this write drops
    is settled in the ledger as `skipped`, so no entry is left `released` forever."""
    pinned = data.get(MessageField.OCCURRENCE_AT)
    if (
        not isinstance(pinned, datetime)
        or update.get(MessageField.OCCURRENCE_AT) is not firestore.DELETE_FIELD
    ):
        return ()
    entry = rt.db.collection(DELIVERIES).document(message_delivery_id(message_id, pinned)).get()
    if (entry.to_dict() or {}).get(LedgerField.STATUS) != LedgerStatus.RELEASED:
        return ()
    cancelled = update.get(MessageField.STATUS) == Status.CANCELLED
    reason = LedgerReason.CANCELLED if cancelled else LedgerReason.RESCHEDULED
    fields = LedgerWrite(status=LedgerStatus.SKIPPED, reason=reason, skipped_at=now)
    return ((entry.reference, fields.to_document(), entry.update_time),)


def _waiting_status(plan: MessagePlan) -> Status:
    return Status.RECURRING if plan.recurring else Status.PENDING
