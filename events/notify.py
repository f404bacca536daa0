"""Notify once per event (`POST /events`): the first caller with a key owns the send, made
during its request; every other caller, at once or years later, is told `duplicate` with
the send's current status, and nothing is sent.

The claim is the `create()` of the ledger entry `deliveries/e:<sha256 of key>` together
with the event `events/<sha256 of key>` (processor.claim.claim_new): Firestore lets exactly
one such batch land. The send and its record are the pipeline's (processor.deliver.send,
processor.finalize), so a caller that dies after its claim leaves a lease that
reconciliation settles as for any send (events.kind). A message to a person passes their
gates first (events.claim.passed_gates: held back, the event ends `skipped` with the reason
and nothing is posted), then opens their DM (as messages.claim does), so the claim's ledger
entry names the DM whose history reconciliation reads.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from google.api_core.exceptions import AlreadyExists, FailedPrecondition
from google.cloud import firestore

from core import logs
from core.documents.deliveries import (
    LedgerField,
    LedgerKind,
    LedgerStatus,
    LedgerWrite,
    Occurrence,
    new_entry,
)
from core.documents.errors import StoredError
from core.documents.events import EventField, EventStatus, EventWrite
from core.documents.write import INCREMENT
from core.errors import Unavailable
from core.event import Event
from core.models import event_delivery_id, event_id
from core.named_batch import NamedBatch
from core.platform import TEAMS, Outcome, PostResult
from core.runtime import Runtime
from core.shards import shard_of
from core.store import DELIVERIES, EVENTS
from events.claim import EventPlan, HeldBack, log_skipped, passed_gates
from events.kind import EVENT_KIND
from processor.abc import Claim
from processor.claim import claim_new
from processor.deliver import report_outcome, send
from processor.escalate import escalate
from processor.finalize import finalize
from processor.gates import gated, read_gates
from processor.outcome import Result

# The answer's `status` for each stored status: released and ambiguous sends are
# `sending` (unresolved) until a pass or reconciliation settles them.
_ANSWERED: dict[str, str] = {
    EventStatus.SENDING: "sending",
    EventStatus.PENDING: "sending",
    EventStatus.SENT: "sent",
    EventStatus.FAILED: "failed",
    EventStatus.UNCONFIRMED: "unconfirmed",
    EventStatus.SKIPPED: "skipped",
}
# Claims tried in one request while the person's gates document keeps changing under them.
_GATE_TRIES = 3


def _answered(stored: Any) -> str:
    return _ANSWERED.get(str(stored), "sending")


@dataclass(frozen=True)
class EventDraft:
    """A valid `POST /events` body (composer checks it)."""

    key: str
    text: str
    channel: str | None = None
    user: str | None = None
    category: str | None = None
    teams_conversation: str | None = None  # instead of channel/user: posted on Teams

    def as_event(self, event_id: str, now: datetime) -> Event:
        """The event its first claim sends (posting to `channel`, or to the person's DM once
        it is opened, or to `teams_conversation` on Teams)."""
        if self.teams_conversation is not None:
            return Event(
                event_id, self.key, self.teams_conversation, self.text, now, platform=TEAMS
            )
        channel = self.channel or ""
        return Event(event_id, self.key, channel, self.text, now, self.user, self.category)


@dataclass(frozen=True)
class Notified:
    delivery_id: str
    duplicate: bool
    status: str

    def to_json(self) -> dict[str, Any]:
        return {"delivery_id": self.delivery_id, "duplicate": self.duplicate, "status": self.status}


def notify(rt: Runtime, draft: EventDraft) -> Notified:
    """Send `draft` unless its key was claimed before; what the caller is answered."""
    ref = rt.db.collection(EVENTS).document(event_id(draft.key))
    if ref.get().exists:  # the common duplicate: no Slack call, no claim attempt
        return _duplicate(rt, ref)
    for _ in range(_GATE_TRIES):
        notified = _claim_and_send(rt, ref, draft)
        if notified is not None:
            return notified
    raise Unavailable(
        f"the gates of {draft.user} changed under every claim; nothing was sent, "
        "try again with the same key"
    )


def _claim_and_send(
    rt: Runtime, ref: firestore.DocumentReference, draft: EventDraft
) -> Notified | None:
    """The first caller's claim, send and record; None when the person's gates document
    changed between their read and the claim or the skip (nothing recorded: try again)."""
    now = rt.clock.now()
    event = draft.as_event(ref.id, now)
    plan = EventPlan.of(rt, event)
    if gated(event):
        passed = passed_gates(plan, read_gates(rt.db, [event]), now)
        if isinstance(passed, HeldBack):
            return _skipped(rt, ref, draft, passed)
        plan = passed
    if draft.user is not None:
        opened = rt.slack.open_dm(draft.user)
        if isinstance(opened, PostResult):
            return _not_opened(rt, ref, draft, opened)
        plan = replace(plan, event=replace(plan.event, channel=opened))
    fields = _fields(rt, ref, draft, plan.event.channel)
    claim = claim_new(rt, EVENT_KIND, ref, fields, plan)
    if claim is Result.RELEASED:
        return None
    if not isinstance(claim, Claim):
        return _duplicate(rt, ref)  # a concurrent caller's claim landed first
    post = send(rt, claim)  # pragma: SYNCPOINT event_claimed
    result = finalize(rt, claim, post)
    report_outcome(rt, claim, post, result)
    stored = (ref.get().to_dict() or {}).get(EventField.STATUS)
    return Notified(claim.delivery_id, False, _answered(stored))


def _fields(
    rt: Runtime, ref: firestore.DocumentReference, draft: EventDraft, channel: str | None
) -> dict[str, Any]:
    """The event as its first caller creates it (the claim adds its status and lease)."""
    write = EventWrite(
        key=draft.key,
        delivery_id=event_delivery_id(ref.id),
        created_at=rt.clock.now(),
        callers=1,
        text=draft.text,
        shard=shard_of(ref.id, rt.settings.shards),
    )
    teams = draft.teams_conversation
    optional = {
        EventField.CHANNEL.value: channel if teams is None else None,
        EventField.TEAMS_CONVERSATION.value: teams,
        EventField.USER.value: draft.user,
        EventField.CATEGORY.value: draft.category,
    }
    return write.to_document() | {k: v for k, v in optional.items() if v is not None}


def _duplicate(rt: Runtime, ref: firestore.DocumentReference) -> Notified:
    """A later caller: counted on the event, told the send's current status."""
    ref.update(EventWrite(callers=INCREMENT).to_document())
    data = ref.get().to_dict() or {}
    status = _answered(data.get(EventField.STATUS))
    logs.info(
        "event duplicate; nothing sent",
        event_id=ref.id,
        delivery_id=event_delivery_id(ref.id),
        status="duplicate",
        event_status=status,
    )
    return Notified(event_delivery_id(ref.id), True, status)


def _not_opened(
    rt: Runtime, ref: firestore.DocumentReference, draft: EventDraft, opened: PostResult
) -> Notified:
    """Slack would not open the person's DM. Definitive (`user_not_found`...): the first
    caller records the event `failed` with Slack's code, nothing posted, and later callers
    are told so. Otherwise nothing is recorded and the caller may try again (503)."""
    detail = f"cannot open a direct message with {draft.user}: {opened.detail or opened.code}"
    if opened.outcome is not Outcome.FAILED:
        raise Unavailable(
            f"{detail}; nothing was claimed or sent, try again with the same key",
            retry_after=opened.retry_after,
        )
    now = rt.clock.now()
    error = StoredError(opened.code or "dm_not_opened", detail, now)
    event = EventWrite(status=EventStatus.FAILED, last_error=error)
    ledger = LedgerWrite(status=LedgerStatus.FAILED, error=error)
    if not _record_unsent(rt, ref, draft, event, ledger):
        return _duplicate(rt, ref)
    escalate(
        rt,
        status="failed",
        occurrence_at=now,
        error_code=error.code,
        detail=detail,
        event_id=ref.id,
        delivery_id=event_delivery_id(ref.id),
        user=draft.user,
    )
    return Notified(event_delivery_id(ref.id), False, "failed")


def _skipped(
    rt: Runtime, ref: firestore.DocumentReference, draft: EventDraft, held: HeldBack
) -> Notified | None:
    """A person's gate held the event back: the first caller records it `skipped` with the
    reason, nothing posted, and later callers are told so. None when the person's document
    moved since their gates read it (nothing recorded: decide again)."""
    now = rt.clock.now()
    skipped = EventWrite(status=EventStatus.SKIPPED)
    ledger = LedgerWrite(status=LedgerStatus.SKIPPED, reason=held.reason, skipped_at=now)
    recorded = _record_unsent(rt, ref, draft, skipped, ledger, held.plan)
    if recorded is None:
        return None
    if not recorded:
        return _duplicate(rt, ref)
    delivery_id = event_delivery_id(ref.id)
    log_skipped(held.plan.event, delivery_id, held.reason)
    return Notified(delivery_id, False, "skipped")


def _record_unsent(
    rt: Runtime,
    ref: firestore.DocumentReference,
    draft: EventDraft,
    event: EventWrite,
    ledger: LedgerWrite,
    held: EventPlan | None = None,
) -> bool | None:
    """The first caller's record of an event never sent: the event and its ledger entry
    created in one batch (with `held`, under the person's version its gates decided on);
    False when another caller's landed first, None when the person's document moved."""
    now = rt.clock.now()
    stored = replace(event, attempts=0, updated_at=now, version=1)
    identity = Occurrence(
        LedgerKind.EVENT, LedgerField.EVENT_ID, ref.id, now, None, user=draft.user
    )
    batch = NamedBatch(rt.db)
    batch.create(ref, _fields(rt, ref, draft, None) | stored.to_document())
    batch.create(
        rt.db.collection(DELIVERIES).document(event_delivery_id(ref.id)),
        new_entry(identity, rt.worker_id, ledger),
    )
    if held is not None:
        held.alongside(batch)
    try:
        batch.commit()  # pragma: SYNCPOINT event_unsent
    except AlreadyExists:
        # Another caller's event, or the person's document created since the read.
        return False if held is None or ref.get().exists else None
    except FailedPrecondition:
        return None
    return True
