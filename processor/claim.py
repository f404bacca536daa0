"""Claiming one occurrence, whatever its kind: after a claim exactly one worker owns its send.

A kind reads a due document and plans its claim (`Claims.plan`); this module commits the plan
in one atomic batch holding (1) the subject's update with a `last_update_time`
precondition equal to the version read (for a kind that fences its subject,
`Kind.fences_subject`), and (2) the `create()` of the occurrence's ledger
document, whose id is derived from (subject, occurrence); with the channel's pacing slots
(processor.channel_slots) and the missed occurrences' entries in the same batch. Either all
land or none does. A second worker fails the precondition (the subject changed) or the
create (the occurrence was claimed before), without waiting on a lock: contention costs one
failed RPC, not a wait (a read-modify-write transaction would hold every worker on the same
documents in turn).

A ledger entry that already exists is the truth about its occurrence: a released or failed
one is claimed again through the same document (attempts + 1), under the update time it was
read at; any other is never sent again, and the subject is repaired from it
(`ClaimPlan.repaired`, under the subject's version read).

A kind that does not fence its subject (an event, whose duplicate callers count themselves
on it at any time) claims again under its ledger entry's version alone, and only an entry
that is itself `released` and due (`reclaimable`): a caller counting itself can never make
the claim lose. What the subject's version guarded, the entry's guards as well, because
every change of such a subject's owner writes its entry: two passes retrying at once both
update the entry under the version they read, so one fails; an operator's settle or
fail-held, or another pass's claim, skip or release since the subject was read, moved the
entry (a claim lands only on an entry that is still `released` and due now, whatever the
subject looked like when it was read); the person's gates stay under their own version
(processor.gates.Reservation, in the same batch).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from google.api_core.exceptions import AlreadyExists, FailedPrecondition
from google.cloud import firestore

from core import logs
from core.documents.deliveries import RECLAIMABLE, LedgerField, LedgerStatus, LedgerWrite
from core.documents.subjects import SubjectWrite
from core.documents.write import DELETE
from core.named_batch import Landed, NamedBatch
from core.runtime import Runtime
from core.store import Snapshot, existing_ids
from processor.abc import A, Claim, ClaimPlan, Kind, Missed, OpenDM, Passes, Planned, Settlement
from processor.channel_slots import Slot, slot_versions, take_slots
from processor.history_search import post_deadline
from processor.outcome import Result


def claim_occurrence(
    rt: Runtime,
    kind: Passes[Any, A],
    snap: Snapshot,
    slots: tuple[Slot, ...] = (),
    ahead: A | None = None,
) -> Claim[Any] | Result:
    """Claim the occurrence `snap` (a due document of `kind`, as just read) is due for; with
    `slots`, take the channel's pacing slots in the same batch; `ahead`: what the pass read
    for its page (Claims.read_ahead). A Result when nothing was claimed: the document was
    settled instead (the plan's Settlement, applied here), or there was nothing to do."""
    plan = addressed(rt, kind.plan(rt, snap, ahead))
    if isinstance(plan, Settlement):
        return plan.apply(rt)
    if isinstance(plan, Result):
        return plan
    return commit_claim(rt, kind, snap, plan, slots)


def addressed(rt: Runtime, planned: Planned[Any]) -> ClaimPlan[Any] | Settlement | Result:
    """The plan, with the DM of a claim to a person opened first (`conversations.open`,
    which answers the same channel every time and posts nothing): the claim's ledger entry
    then names the channel before anything is posted there, and reconciliation knows whose
    history to read. Slack's refusal goes to the plan, which settles it."""
    if not isinstance(planned, OpenDM):
        return planned
    return planned.then(rt.slack.open_dm(planned.user))


def commit_claim(
    rt: Runtime,
    kind: Passes[Any, Any],
    snap: Snapshot,
    plan: ClaimPlan[Any],
    slots: tuple[Slot, ...],
) -> Claim[Any] | Result:
    now = rt.clock.now()
    expires_at = now + timedelta(seconds=rt.settings.lease_seconds)
    missed = list(plan.missed)
    # A second try only after dropping missed records that exist already (see below).
    for _ in range(2):
        batch = NamedBatch(rt.db)
        claimed = plan.claimed(rt.worker_id, expires_at, 1, missed)
        _update_subject(rt, batch, snap, claimed, now, kind.fences_subject)
        batch.create(plan.ledger_ref, plan.new_entry() | _claim_entry(rt, plan, now, expires_at, 1))
        _alongside(rt, batch, plan, missed, slots, now)
        try:
            landed = batch.commit()  # pragma: SYNCPOINT claim
        except FailedPrecondition:
            return Result.DUPLICATE  # another worker (or an edit) changed it since our read
        except AlreadyExists:
            # Our subject precondition held, so no worker recorded these in a claim of this
            # version: an existing entry is older history, and it stays as it is.
            existing = existing_ids(rt.db, [plan.ledger_ref, *(m.ref for m in missed)])
            left = [m for m in missed if m.ref.id not in existing]
            if plan.ledger_ref.id in existing:
                return _claim_existing(rt, kind, snap, plan, left, slots, expires_at)
            if len(left) == len(missed):
                return Result.DUPLICATE  # the channel's slot: another worker took it
            missed = left
            continue
        plan.log(missed)
        return _claimed(rt, kind, snap, plan, None, 1, landed, slots, now)
    return Result.DUPLICATE


def claim_new(
    rt: Runtime,
    kind: Passes[Any, Any],
    subject: firestore.DocumentReference,
    fields: dict[str, Any],
    plan: ClaimPlan[Any],
) -> Claim[Any] | Result:
    """Claim an occurrence whose subject the claim itself creates (a notify-once event, by
    its first caller): the `create()` of the subject (`fields` and the claim's lease) and of
    the ledger entry in one batch, with the plan's own writes. The first caller's lands; any
    other's fails whole on AlreadyExists (Result.DUPLICATE): nothing is claimed, nothing is
    sent. A plan's own write that failed (a person's gates document changed or was created
    since it was read) fails it whole too (Result.RELEASED: nothing claimed; plan again)."""
    now = rt.clock.now()
    expires_at = now + timedelta(seconds=rt.settings.lease_seconds)
    claimed = replace(plan.claimed(rt.worker_id, expires_at, 1, ()), updated_at=now, version=1)
    batch = NamedBatch(rt.db)
    batch.create(subject, fields | claimed.to_document())
    batch.create(plan.ledger_ref, plan.new_entry() | _claim_entry(rt, plan, now, expires_at, 1))
    plan.alongside(batch)
    try:
        landed = batch.commit()  # pragma: SYNCPOINT claim_new
    except AlreadyExists:
        # Another caller's subject, or a plan's document created meanwhile (plan again).
        return Result.DUPLICATE if subject.get().exists else Result.RELEASED
    except FailedPrecondition:
        return Result.RELEASED
    plan.landed(landed)
    return Claim(
        kind,
        plan.subject(None),
        subject.id,
        plan.occurrence_at,
        plan.ledger_ref.id,
        1,
        rt.worker_id,
        landed.version(subject),
        landed.version(plan.ledger_ref),
        (),
        post_deadline(rt.settings, now),
    )


def _claim_existing(
    rt: Runtime,
    kind: Passes[Any, Any],
    snap: Snapshot,
    plan: ClaimPlan[Any],
    missed: list[Missed],
    slots: tuple[Slot, ...],
    expires_at: datetime,
) -> Claim[Any] | Result:
    """The occurrence has a ledger entry already: a released or failed one is claimed again
    through it; any other is the truth about the occurrence, and the subject is repaired."""
    now = rt.clock.now()
    ledger = plan.ledger_ref.get()
    entry = ledger.to_dict() or {}
    if not reclaimable(kind, entry, now):
        if entry.get(LedgerField.STATUS) == LedgerStatus.RELEASED:
            return Result.DUPLICATE  # released again since the subject was read: not due yet
        return repair_from_ledger(rt, kind, snap, plan, entry, missed)
    attempts = int(entry.get(LedgerField.ATTEMPTS) or 0) + 1
    batch = NamedBatch(rt.db)
    claimed = plan.claimed(rt.worker_id, expires_at, attempts, missed)
    _update_subject(rt, batch, snap, claimed, now, kind.fences_subject)
    batch.update(
        plan.ledger_ref,
        # A new attempt, a new window for the history search.
        _claim_entry(rt, plan, now, expires_at, attempts)
        | LedgerWrite(search=DELETE).to_document(),
        option=rt.db.write_option(last_update_time=ledger.update_time),
    )
    _alongside(rt, batch, plan, missed, slots, now)
    try:
        landed = batch.commit()  # pragma: SYNCPOINT reclaim
    except (FailedPrecondition, AlreadyExists):
        return Result.DUPLICATE
    plan.log(missed)
    return _claimed(rt, kind, snap, plan, entry, attempts, landed, slots, now)


def repair_from_ledger(
    rt: Runtime,
    kind: Kind,
    snap: Snapshot,
    plan: ClaimPlan[Any],
    entry: dict[str, Any],
    missed: list[Missed],
) -> Result:
    """The subject waits for an occurrence its ledger already settled (or another worker
    holds): never send it again; bring the subject in line with the ledger instead. The
    older missed occurrences are recorded all the same."""
    now = rt.clock.now()
    batch = NamedBatch(rt.db)
    _update_subject(rt, batch, snap, plan.repaired(entry, now, missed), now, fenced=True)
    for record in missed:
        batch.create(record.ref, record.fields)
    try:
        batch.commit()
    except (FailedPrecondition, AlreadyExists):
        return Result.DUPLICATE
    plan.log(missed)
    logs.warning(
        f"{kind.name} disagreed with its ledger; repaired from the ledger, nothing sent",
        **{kind.id_field: snap.id},
        **plan.log_fields(),
        ledger_status=entry.get(LedgerField.STATUS),
        status="duplicate",
    )
    return Result.DUPLICATE


def reclaimable(kind: Kind, entry: dict[str, Any], now: datetime) -> bool:
    """Whether a ledger entry (released or failed) may be claimed again now. An entry that is
    its occurrence's only fence (`Kind.fences_subject` false) must say so itself: `released`,
    with its `retry_at` (every release writes one) passed. A failed one is final there."""
    if kind.fences_subject:
        return entry.get(LedgerField.STATUS) in RECLAIMABLE
    retry_at = entry.get(LedgerField.RETRY_AT)
    due = not isinstance(retry_at, datetime) or retry_at <= now
    return entry.get(LedgerField.STATUS) == LedgerStatus.RELEASED and due


def _update_subject(
    rt: Runtime,
    batch: NamedBatch,
    snap: Snapshot,
    update: SubjectWrite,
    now: datetime,
    fenced: bool,
) -> None:
    """The subject's write, under the version read when `fenced`."""
    option = rt.db.write_option(last_update_time=snap.update_time) if fenced else None
    batch.update(snap.reference, update.stamped(now).to_document(), option=option)


def _claim_entry(
    rt: Runtime, plan: ClaimPlan[Any], now: datetime, expires_at: datetime, attempts: int
) -> dict[str, Any]:
    """What every claim writes on its ledger entry."""
    claim = LedgerWrite(
        status=LedgerStatus.CLAIMED,
        claimed_at=now,
        worker=rt.worker_id,
        lease_expires_at=expires_at,
        attempts=attempts,
        late_seconds=max(0.0, (now - plan.occurrence_at).total_seconds()),
    )
    return claim.to_document() | plan.claim_fields().to_document()


def _alongside(
    rt: Runtime,
    batch: NamedBatch,
    plan: ClaimPlan[Any],
    missed: list[Missed],
    slots: tuple[Slot, ...],
    now: datetime,
) -> None:
    """The batch's writes after the subject's and the ledger entry's: the pacing slots,
    the missed records, and the plan's own."""
    take_slots(batch, slots, rt.worker_id, now)
    for record in missed:
        batch.create(record.ref, record.fields)
    plan.alongside(batch)


def _claimed(
    rt: Runtime,
    kind: Passes[Any, Any],
    snap: Snapshot,
    plan: ClaimPlan[Any],
    entry: dict[str, Any] | None,
    attempts: int,
    landed: Landed,
    slots: tuple[Slot, ...],
    now: datetime,
) -> Claim[Any]:
    """This worker's claim, fenced on the update times its batch left."""
    plan.landed(landed)
    return Claim(
        kind,
        plan.subject(entry),
        snap.id,
        plan.occurrence_at,
        plan.ledger_ref.id,
        attempts,
        rt.worker_id,
        landed.version(snap.reference),
        landed.version(plan.ledger_ref),
        slot_versions(landed, slots),
        post_deadline(rt.settings, now),
    )
