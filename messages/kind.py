"""Scheduled messages as a kind of send: a record (processor.occurrence_kind) and the rules
that are a message's own.

- Delivered: a one-off is `sent`; a series moves to its next occurrence (`recurring`) or ends
  `completed` (messages.advance).
- Failed: the message is `failed` with `last_error`.
- Not delivered (rate limited, proven absent): released, claimed again at `next_run_at`
  through the same ledger entry (`occurrence_at` keeps its identity).
- Ambiguous: the claim and its lease stay; reconciliation settles it once the lease expires.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from core.documents.deliveries import LedgerField, LedgerKind
from core.documents.messages import WAITING, MessageField, MessageWrite, Status
from core.documents.people import Holds
from core.documents.subjects import SubjectField
from core.documents.write import DELETE, INCREMENT, UNSET
from core.models import Message, message_delivery_id
from core.platform import SLACK
from core.queues import Queue
from core.runtime import Runtime
from core.schedule import resume_next_run_at
from core.store import MESSAGES, Snapshot
from formatting.render import Rendered, render, with_actions
from messages.advance import settled
from messages.claim import plan_message
from messages.preview import preview_messages
from messages.settle import refuse_unless_current
from processor.abc import Doc, Kind, Planned, Settle
from processor.gated_rules import GatedRules
from processor.gates import Gates
from processor.occurrence_kind import (
    Delivered,
    OccurrenceKind,
    Statuses,
    Words,
)
from processor.outcome import Result

_DELIVERED = {
    Status.SENT: Result.SENT,
    Status.RECURRING: Result.ADVANCED,
    Status.COMPLETED: Result.COMPLETED,
}


class MessageRules(GatedRules[Message]):
    def plan(
        self, rt: Runtime, kind: Kind, snap: Snapshot, ahead: Gates | None
    ) -> Planned[Message]:
        return plan_message(rt, kind, snap, ahead)

    def delivered(
        self, subject: Message, occurrence_at: datetime, ts: str | None, now: datetime
    ) -> Delivered:
        message = replace(
            settled(subject, occurrence_at),
            last_slack_ts=ts if subject.platform == SLACK else UNSET,
            last_sent_at=now,
            sent_count=INCREMENT,
            last_error=DELETE,
        )
        assert isinstance(message.status, Status)  # settling always sets one
        return Delivered(message, _DELIVERED[message.status])

    def released(self, subject: Message, occurrence_at: datetime) -> MessageWrite:
        # `occurrence_at` keeps the retry on the same ledger entry although next_run_at moves.
        status = Status.RECURRING if subject.is_recurring else Status.PENDING
        return MessageWrite(status=status, occurrence_at=occurrence_at)

    def render(self, subject: Message, delivery_id: str) -> Rendered:
        rendered = render(subject.platform, subject.text, allow_broadcast=subject.allow_broadcast)
        return with_actions(rendered, delivery_id, subject.actions)

    def preview(self, rt: Runtime, due: list[Snapshot], now: datetime) -> list[dict[str, Any]]:
        return preview_messages(rt, due, now)

    def taken_over(self, subject: Message, entry: Doc) -> Message:
        # What its claim reserved for the person's gates, which this settlement records.
        message = replace(subject, holds=Holds.from_document(entry.get(LedgerField.GATES)))
        dm = entry.get(LedgerField.CHANNEL)
        if message.user is not None and isinstance(dm, str):
            # The DM the claim opened and posted to: its history is where the post would be.
            return message.to_dm(dm)
        return message

    def settle_check(self, rt: Runtime, action: Settle, entry: Doc, data: Doc) -> None:
        refuse_unless_current(rt, action.delivery_id, entry, data)

    def next_due(self, subject: Message, data: Doc, now: datetime) -> datetime | None:
        if subject.recurrence is None:
            send_at = data.get(MessageField.SEND_AT)
            return send_at if isinstance(send_at, datetime) else None
        return resume_next_run_at(subject.recurrence, now)


CHANNEL, USER, TEAMS = SubjectField.CHANNEL, SubjectField.USER, SubjectField.TEAMS_CONVERSATION

CHANNEL, USER = SubjectField.CHANNEL, SubjectField.USER

MESSAGE_KIND: OccurrenceKind[Message, Gates] = OccurrenceKind(
    name=LedgerKind.MESSAGE,
    id_field=LedgerField.MESSAGE_ID,
    # A message to a person has `user` and no `channel` until its claim opens their DM.
    queue=Queue(MESSAGES, tuple(WAITING), Status.SENDING, (CHANNEL, USER, TEAMS)),
    statuses=Statuses(
        failed=Status.FAILED,
        unconfirmed=Status.UNCONFIRMED,
        every=frozenset(Status),
        # A paused message is sent again once a person resumes it.
        live=frozenset((*WAITING, Status.SENDING, Status.PAUSED)),
    ),
    write=MessageWrite,
    words=Words(
        delivered="delivered",
        ambiguous="delivery outcome unknown; held for reconciliation",
        released="delivery not made; released for retry",
        noun="a sending message",
    ),
    parse=Message.from_document,
    delivery_id=message_delivery_id,
    rules=MessageRules(),
)
