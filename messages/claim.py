"""Planning the claim of a message's occurrence (processor.claim commits it). Planning writes
nothing: what settles a message instead of a claim (rejected, expired, cancelled, every
occurrence missed, held back by a gate) is a Settlement the pipeline applies.

The plan names the occurrence, the message's update under the claim (its lease, the series'
anchor, the missed occurrences counted) and how a message that disagrees with its ledger is
repaired. A ledger entry is the truth about its occurrence: a sent or skipped one moves the
message past it, a claimed one gives the message its lease back, an unconfirmed one parks it.

Time policy at claim (see core.schedule.catch_up): a series that was down claims only its
most recent due occurrence, if it is within `misfire_grace_seconds`; the older ones are
recorded `skipped` in the same batch (messages.missed). A one-off past its `expires_at`
ends `failed` (code `expired`).

A message to a person (`user`) posts to their DM: the plan asks the pipeline to open it
(processor.abc.OpenDM; `conversations.open` answers the same channel every time and posts
nothing) before the claim, so the claim's ledger entry names the DM channel before anything
is posted there, and reconciliation knows whose history to read. A user Slack refuses a DM
with (`user_not_found`, `user_disabled`, `cannot_dm_bot`...) ends the message `failed` with
that code, before any claim; a transient refusal (rate limit, 5xx) leaves it due for the
next pass.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import Any

from google.api_core.exceptions import AlreadyExists, FailedPrecondition

from core import logs
from core.documents.deliveries import (
    RECLAIMABLE,
    LedgerField,
    LedgerReason,
    LedgerStatus,
    LedgerWrite,
)
from core.documents.errors import StoredError
from core.documents.messages import WAITING, MessageField, MessageWrite, Status
from core.documents.write import DELETE
from core.errors import DocumentError
from core.models import Message, check_instant, message_delivery_id
from core.platform import Outcome, PostResult
from core.runtime import Runtime
from core.schedule import catch_up
from core.store import DELIVERIES, Snapshot
from messages.ledger import message_entry
from messages.missed import missed_records, skip_missed
from messages.plan import MessagePlan, with_mute
from messages.skip_gated import skip_gated
from processor.abc import Kind, Missed, OpenDM, Planned, Settlement
from processor.claim import repair_from_ledger
from processor.escalate import escalate
from processor.gates import (
    Gates,
    held_back,
    read_gates,
    reservation,
    under_version,
)
from processor.outcome import Result
from processor.reject import reject

EXPIRED = "expired"  # the code of a one-off that passed its `expires_at` unsent


def occurrence_of(data: dict[str, Any]) -> datetime:
    """The occurrence a waiting message delivers next: `next_run_at`, unless a released
    attempt is being retried later (then `occurrence_at` keeps its identity)."""
    pinned = data.get(MessageField.OCCURRENCE_AT)
    return check_instant(pinned or data.get(MessageField.NEXT_RUN_AT), MessageField.OCCURRENCE_AT)


def planned_occurrence(message: Message, data: dict[str, Any], now: datetime) -> datetime | None:
    """The occurrence a claim at `now` would deliver, None when it would send nothing (a
    one-off past `expires_at`, or a series whose due occurrences are all past their grace).
    What a dry run should preview."""
    if message.expired(now):
        return None
    occurrence = occurrence_of(data)
    if message.recurrence is None or data.get(MessageField.OCCURRENCE_AT) is not None:
        return occurrence
    return catch_up(message.recurrence, occurrence, now, message.misfire_grace_seconds).send


def plan_message(
    rt: Runtime, kind: Kind, snap: Snapshot, gates: Gates | None = None
) -> Planned[Message]:
    """The claim of the occurrence `snap` (a waiting, due message as just read) is due for;
    or what settles it instead; a Result when it is not due after all. It writes nothing.
    `gates`: the pass's read of its page's gate documents (None: read here, for this
    message alone)."""
    data = snap.to_dict() or {}
    now = rt.clock.now()
    due = data.get(MessageField.NEXT_RUN_AT)
    if data.get(MessageField.STATUS) not in WAITING or not isinstance(due, datetime) or due > now:
        return Result.SKIPPED  # claimed, settled or edited since it was found due
    if data.get(MessageField.DELETED):
        return Settlement(partial(_retire_deleted, snap=snap, now=now))
    try:
        message = Message.from_document(snap.id, data)
        occurrence = occurrence_of(data)
    except DocumentError as exc:
        return rejected(kind, snap, exc, now)
    if message.expired(now):
        detail = f"not sent: expires_at {message.expires_at} passed first"
        return _unsent(kind, snap, message, occurrence, EXPIRED, detail)
    missed: list[Missed] = []
    try:  # evaluating the rule is bounded by work, and fails the document past it
        # The search restarts near the due occurrence; the claim stores where (and the
        # finalize goes on from there).
        message = message.reanchored(occurrence)
        plan = None
        if message.recurrence is not None and data.get(MessageField.OCCURRENCE_AT) is None:
            # (A released retry keeps its occurrence: it was due in time, not a misfire.)
            plan = catch_up(message.recurrence, occurrence, now, message.misfire_grace_seconds)
    except DocumentError as exc:
        return rejected(kind, snap, exc, now)
    if plan is not None:
        missed = missed_records(rt, message, plan, now)
        if plan.send is None:
            return Settlement(
                partial(skip_missed, snap=snap, message=message, plan=plan, missed=missed, now=now)
            )
        occurrence = plan.send
    if message.user is None:
        return MessagePlan.of(rt, message, occurrence, missed)
    if gates is None or not gates.covers(message):
        gates = read_gates(rt.db, [message])
    return _plan_to_person(rt, kind, snap, message, occurrence, missed, gates)


def _plan_to_person(
    rt: Runtime,
    kind: Kind,
    snap: Snapshot,
    message: Message,
    occurrence: datetime,
    missed: list[Missed],
    gates: Gates,
) -> MessagePlan | OpenDM[Message] | Settlement:
    """The claim of a message to a person: their gates first (processor.gates: a held-back
    occurrence is recorded `skipped` with the reason, before any platform call), then, on
    Slack, their DM opened (by the pipeline: OpenDM; on Teams the personal chat is named
    already); the plan carries what the send reserves on their `people` document."""
    now = rt.clock.now()
    plan = MessagePlan.of(rt, message, occurrence, missed)
    delivery_id = plan.ledger_ref.id
    docs = gates.docs(message)
    try:
        reason = held_back(message, occurrence, delivery_id, docs, now)
    except DocumentError as exc:  # its category cannot be read: its gates are unknown
        return rejected(kind, snap, exc, now)
    if reason is not None:
        # "already sent" is the ledger's create(): only the person's gates answer here.
        person = under_version(gates, message, docs, delivery_id)
        held_plan = replace(plan, reservation=person)
        skip = partial(skip_gated, kind=kind, snap=snap, plan=held_plan, occurrence=occurrence)
        return Settlement(partial(skip, missed=missed, reason=LedgerReason(reason)))
    holds, held = reservation(gates, message, docs, occurrence, delivery_id, now)
    sent = with_mute(replace(message, holds=holds), docs.category)
    planned = replace(plan, message=sent, reservation=held)
    assert message.user is not None
    if message.channel is not None:  # a Teams personal chat: the conversation is theirs
        return planned
    return OpenDM(message.user, partial(_to_dm, kind, snap, planned))


def _to_dm(
    kind: Kind, snap: Snapshot, plan: MessagePlan, opened: str | PostResult
) -> MessagePlan | Settlement:
    """The plan posting to the person's DM as Slack opened it; or, when Slack would not
    open it, a definitive refusal ends the message `failed` with Slack's code, and any other
    leaves it due for the next pass (nothing claimed or posted)."""
    if isinstance(opened, str):
        return replace(plan, message=plan.message.to_dm(opened))
    message, occurrence = plan.message, plan.occurrence_at
    detail = f"cannot open a direct message with {message.user}: {opened.detail or opened.code}"
    if opened.outcome is Outcome.FAILED:
        return _unsent(kind, snap, message, occurrence, opened.code or "dm_not_opened", detail)
    log = partial(_not_opened, message=message, occurrence=occurrence, code=opened.code)
    return Settlement(partial(log, detail=detail))


def _not_opened(
    rt: Runtime, *, message: Message, occurrence: datetime, code: str | None, detail: str
) -> Result:
    """Nothing was claimed or posted: the next pass opens the DM again."""
    logs.warning(
        "direct message not opened; left due for the next pass",
        message_id=message.id,
        user=message.user,
        occurrence_at=occurrence,
        status=Result.RELEASED.value,
        error_code=code,
        detail=detail,
    )
    return Result.RELEASED


def _unsent(
    kind: Kind, snap: Snapshot, message: Message, occurrence: datetime, code: str, detail: str
) -> Settlement:
    """`_fail_unsent`, as the plan decides it."""

    def fail(rt: Runtime) -> Result:
        error = StoredError(code, detail, rt.clock.now())
        return _fail_unsent(rt, kind, snap, message, occurrence, error)

    return Settlement(fail)


def rejected(kind: Kind, snap: Snapshot, exc: DocumentError, now: datetime) -> Settlement:
    """`reject_document`, as the plan decides it."""
    return Settlement(partial(reject_document, kind=kind, snap=snap, exc=exc, now=now))


def _fail_unsent(
    rt: Runtime,
    kind: Kind,
    snap: Snapshot,
    message: Message,
    occurrence: datetime,
    error: StoredError,
) -> Result:
    """An occurrence that will never be sent, before any claim of it (a one-off past its
    `expires_at`, a person Slack will not open a DM with): the message ends `failed` with
    `error`'s code and the occurrence's ledger entry says so, so the deliveries listing shows
    why nothing was posted."""
    now = rt.clock.now()
    failed = MessageWrite(
        status=Status.FAILED, last_error=error, lease=DELETE, occurrence_at=DELETE
    ).stamped(now)
    batch = rt.db.batch()
    batch.update(
        snap.reference,
        failed.to_document(),
        option=rt.db.write_option(last_update_time=snap.update_time),
    )
    ledger_ref = rt.db.collection(DELIVERIES).document(message_delivery_id(snap.id, occurrence))
    ledger = ledger_ref.get()
    entry = ledger.to_dict() or {}
    if not ledger.exists:
        ledger_failed = LedgerWrite(status=LedgerStatus.FAILED, error=error)
        batch.create(ledger_ref, message_entry(message, occurrence, rt.worker_id, ledger_failed))
    elif entry.get(LedgerField.STATUS) in RECLAIMABLE:
        batch.update(
            ledger_ref,
            LedgerWrite(status=LedgerStatus.FAILED, error=error).to_document(),
            option=rt.db.write_option(last_update_time=ledger.update_time),
        )
    else:  # sent, claimed or unconfirmed: that is the truth, not the expiry
        plan = MessagePlan.of(rt, message, occurrence)
        return repair_from_ledger(rt, kind, snap, plan, entry, [])
    try:
        batch.commit()  # pragma: SYNCPOINT expire
    except (FailedPrecondition, AlreadyExists):
        return Result.DUPLICATE
    person = {} if message.user is None else {"user": message.user}
    escalate(
        rt,
        status="failed",
        message_id=snap.id,
        occurrence_at=occurrence,
        error_code=error.code,
        detail=str(error.message),
        delivery_id=ledger_ref.id,
        channel=message.channel,
        **person,
    )
    return Result.FAILED


def _retire_deleted(rt: Runtime, snap: Snapshot, now: datetime) -> Result:
    """A soft-deleted message is never sent; cancelling it keeps it out of later due
    queries instead of being skipped on every tick."""
    try:
        snap.reference.update(
            MessageWrite(status=Status.CANCELLED).stamped(now).to_document(),
            option=rt.db.write_option(last_update_time=snap.update_time),
        )
    except FailedPrecondition:
        return Result.DUPLICATE
    return Result.SKIPPED


def reject_document(
    rt: Runtime, kind: Kind, snap: Snapshot, exc: DocumentError, now: datetime
) -> Result:
    """A message that cannot be sent as it is ends `failed` with a code saying why; the
    pass goes on."""
    due = (snap.to_dict() or {}).get(MessageField.NEXT_RUN_AT)
    detail = f"cannot be sent as stored: {exc.message}"
    occurrence = due if isinstance(due, datetime) else None
    return reject(
        rt, kind, snap, exc, status=Status.FAILED, detail=detail, occurrence_at=occurrence
    )
