"""`POST /messages/{id}/send-now`: a message's next occurrence sent during the request,
exactly once however often it is asked for.

Two steps, each the processor's own guarantee:
- the pin: on a fresh read, under a precondition on it (composer.versions), the occurrence
  the message is on is written to `occurrence_at` and made due now (`next_run_at` = now).
  The occurrence keeps its identity, so its ledger entry (`m:<id>:<occurrence>`) is the
  scheduled occurrence's, and a series then goes on with the occurrence after it.
- the send: the claim, post and record of a pass for this one message
  (processor.deliver), so gates, DMs, the ledger's `create()` and the outcome line are the
  same. A pass running at the same time may claim it first: then this answer says
  `sending`, and the ledger still lets exactly one of them post.

A second call for the same occurrence finds it pinned and due (before the claim), `sending`
(during) or moved on past it (after): 409, nothing posted. A request that dies between the
pin and the send leaves the message due now with its occurrence pinned: the next pass sends
it, once.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from composer.serialize import message_json
from composer.versions import Decision, decide_and_write, version_of
from core import logs
from core.documents.deliveries import LedgerField, LedgerStatus
from core.documents.messages import WAITING, MessageField, MessageWrite
from core.errors import Conflict, DocumentError
from core.models import message_delivery_id
from core.runtime import Runtime
from core.store import DELIVERIES, MESSAGES
from messages.claim import occurrence_of
from messages.kind import MESSAGE_KIND
from processor.deliver import Sent, claim_and_send, record_sends

# The answer's `status` is the ledger entry's, when it says how the occurrence ended; else
# (claimed by this or another worker, released for a retry, unconfirmed) `sending`:
# GET /messages/{id}/deliveries shows how it ends.
_ENDED = (LedgerStatus.SENT, LedgerStatus.FAILED, LedgerStatus.SKIPPED)


def send_now(
    rt: Runtime, message_id: str, seen: datetime | None, *, by: str | None = None
) -> dict[str, Any]:
    """Pin the next occurrence (409 when it is not `seen`, is already being sent, or the
    message is not waiting), then claim and send it as a pass would."""
    pinned, occurrence = pin_now(rt, message_id, seen, by)  # pragma: SYNCPOINT edit
    return send_pinned(rt, message_id, occurrence, pinned)


def send_pinned(
    rt: Runtime, message_id: str, occurrence: datetime, pinned: dict[str, Any]
) -> dict[str, Any]:
    """The message, due now on `occurrence`, claimed and sent as a pass would (a pass may
    claim it first); the answer's `message`, `delivery_id` and `status`."""
    reference = rt.db.collection(MESSAGES).document(message_id)
    done = claim_and_send(MESSAGE_KIND, rt, reference.get())
    if isinstance(done, Sent):
        record_sends(rt, [done])
    delivery_id = message_delivery_id(message_id, occurrence)
    entry = rt.db.collection(DELIVERIES).document(delivery_id).get().to_dict() or {}
    status = entry.get(LedgerField.STATUS)
    return {
        "message": message_json(message_id, reference.get().to_dict() or pinned),
        "delivery_id": delivery_id,
        "status": str(status) if status in _ENDED else "sending",
    }


def pin_now(
    rt: Runtime, message_id: str, seen: datetime | None, by: str | None = None
) -> tuple[dict[str, Any], datetime]:
    """The first step alone: the message as pinned, and the occurrence it is pinned to."""
    now = rt.clock.now()
    pinned: list[datetime] = []

    def decide(data: dict[str, Any]) -> Decision:
        occurrence = _next_occurrence(data, seen, now)
        pinned[:] = [occurrence]
        update = MessageWrite(
            occurrence_at=occurrence,
            next_run_at=now,
            updated_at=now,
            version=version_of(data) + 1,
        )
        return Decision(update.to_document())

    reference = rt.db.collection(MESSAGES).document(message_id)
    after = decide_and_write(rt.db, reference, "message", decide, by)
    logs.info(
        "message pinned to send now",
        message_id=message_id,
        occurrence_at=pinned[0],
        delivery_id=message_delivery_id(message_id, pinned[0]),
    )
    return after, pinned[0]


def _next_occurrence(data: dict[str, Any], seen: datetime | None, now: datetime) -> datetime:
    """The occurrence the message is on, if it may be sent now: 409 otherwise."""
    status = data.get(MessageField.STATUS)
    if data.get(MessageField.DELETED) is True or status not in WAITING:
        raise Conflict(
            f"the message is {status}: only a pending or recurring message can be sent now",
            [{"field": MessageField.STATUS.value, "message": str(status)}],
        )
    try:
        occurrence = occurrence_of(data)
    except DocumentError as exc:
        raise Conflict(f"the stored message cannot be sent ({exc.code}): {exc.message}") from None
    if seen is not None and seen != occurrence:
        raise Conflict(
            f"the next occurrence is {occurrence.isoformat()}, not {seen.isoformat()}: "
            "it was sent or moved since you read it",
            [{"field": MessageField.OCCURRENCE_AT.value, "message": occurrence.isoformat()}],
        )
    due = data.get(MessageField.NEXT_RUN_AT)
    if (
        data.get(MessageField.OCCURRENCE_AT) is not None
        and isinstance(due, datetime)
        and due <= now
    ):
        raise Conflict(
            f"the occurrence {occurrence.isoformat()} is already due and being sent",
            [{"field": MessageField.OCCURRENCE_AT.value, "message": occurrence.isoformat()}],
        )
    return occurrence
