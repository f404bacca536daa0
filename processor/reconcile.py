"""Reconciliation: settling occurrences whose lease expired while still `sending`.

A lease expires when its worker died or its send was ambiguous (timeout, dropped
connection, 5xx). Firestore cannot say what happened, but the platform can: every post
carries its `delivery_id` (Slack's message metadata, the Teams card's body), so the
conversation's history is read over the narrowest window that can hold the post, across
passes if the platform's limits demand it (processor.history_search).

- Found: it was delivered; finalize as delivered with that `ts`, never send again.
- Absent: it was not; release it for another attempt with exponential backoff, up to
  MAX_ATTEMPTS, then `failed` with `max_attempts`.
- Unreadable (missing scope, not in channel, bad auth): the message's `on_ambiguous` decides:
  `hold` (default) parks it `unconfirmed` and escalates, never resending by itself; `retry`
  treats it as absent (at-least-once: a duplicate is possible, a loss is not).
- Not settled this pass (a rate limit, a 5xx, pages of the window still to read, the pass's
  history calls spent): left claimed with its search kept, asked again by a later pass;
  escalated once after an hour (processor.held).
- A lease that cannot be settled (the document no longer parses, the ledger entry is not
  `claimed`): held for a person, out of the page's head, escalated (processor.held).

The reconciler first takes the lease over in one precondition-checked batch (message and
ledger), which fences the old worker: its late finalize fails, whatever it was about to say.
A kind that does not fence its subject (an event: `Kind.fences_subject`) is taken over, and
its search kept, under its ledger entry's version alone, and only while the entry's own
lease has expired: a duplicate caller counting itself on the event never fails either.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from google.api_core.exceptions import FailedPrecondition

from core import logs
from core.documents.deliveries import LedgerField, LedgerStatus, LedgerWrite, entry_post
from core.documents.leases import LeasePatch
from core.documents.subjects import SubjectField, SubjectWrite
from core.documents.write import DELETE
from core.named_batch import Landed, NamedBatch
from core.platform import Lookup, Outcome, PostResult, Witness
from core.runtime import Runtime
from core.store import DELIVERIES, Snapshot
from processor.abc import Claim, Leased, LeaseUnreadable, Passes, Reconciles
from processor.deliver import report_outcome
from processor.finalize import finalize, hold_unconfirmed
from processor.held import hold_lease
from processor.history_search import HistoryBudget, ask_history, searchable
from processor.outcome import Result, tally
from processor.pass_counts import io_error

BACKOFF_BASE = timedelta(minutes=1)
BACKOFF_CAP = timedelta(hours=1)
ON_AMBIGUOUS = ("hold", "retry")


def backoff(attempts: int) -> timedelta:
    """1, 2, 4, 8... minutes after the n-th failed attempt, at most an hour."""
    return min(BACKOFF_BASE * (1 << max(attempts - 1, 0)), BACKOFF_CAP)


def reconcile_kind(
    rt: Runtime, kind: Reconciles[Any], budget: HistoryBudget | None = None
) -> Counter[str]:
    """Settle every expired lease of `kind` this pass can take; the summary's counts. History
    calls come from `budget` (the pass's, shared by every kind; a new one when None)."""
    budget = budget or HistoryBudget.for_pass(rt)
    snaps = kind.queue.expired(rt.db, rt.clock.now(), rt.settings.tick_limit)
    budget.expect(len(snaps))
    return settle_each(snaps, lambda snap: reconcile_one(rt, kind, snap, budget), kind.id_field)


def settle_expired(
    rt: Runtime, kind: Passes[Any, Any], budget: HistoryBudget | None
) -> Counter[str]:
    """A pass's first step for `kind`, whatever dispatches the rest: its expired leases
    reconciled, and what it sweeps up besides. A failing query is counted and logged, and
    does not keep the pass from what is due (a lease left expired is settled by a later
    pass)."""
    counts: Counter[str] = Counter()
    try:
        counts.update(reconcile_kind(rt, kind, budget))
        counts.update(kind.sweep(rt))
    except Exception as exc:
        io_error(counts, "reading the expired leases failed", exc, collection=kind.collection)
    return counts


def settle_each(
    snaps: list[Snapshot], settle: Callable[[Snapshot], Result | None], id_field: str
) -> Counter[str]:
    """Settle each expired lease in turn, counting what happened. One document's trouble is
    logged and counted, never the end of the pass: its lease stays for a later pass."""
    counts: Counter[str] = Counter()
    for snap in snaps:
        try:
            result = settle(snap)
        except Exception as exc:
            counts["errors"] += 1
            logs.error(
                "reconciling a lease raised",
                status="error",
                error_code=type(exc).__name__,
                error_message=str(exc),
                **{id_field: snap.id},
            )
            continue
        if result is not None:
            tally(counts, result)
            counts["reconciled"] += result not in (Result.DUPLICATE, Result.FENCED)
    return counts


def reconcile_one(
    rt: Runtime, kind: Reconciles[Any], snap: Snapshot, budget: HistoryBudget
) -> Result | None:
    """Settle one expired lease; None when it is not settled this pass (Slack could not be
    asked, or its window is not read to the end yet)."""
    data = snap.to_dict() or {}
    calls = budget.share()
    try:
        leased = kind.leased(snap.id, data)
    except LeaseUnreadable as exc:
        subject: dict[str, Any] = {kind.id_field: snap.id}
        hold_lease(rt, snap, exc.code, exc.detail, **subject)
        return None
    if calls == 0:
        return None  # this pass's history calls are spent: a later pass asks
    ledger = _claimed_entry(rt, kind, snap, leased)
    if ledger is None:
        return None
    if budget.resume_at(entry_post(ledger.to_dict() or {})[0]) is not None:
        return None  # its platform's history answered 429: nothing is taken over meanwhile
    search = searchable(rt, ledger.to_dict() or {}, leased.occurrence_at)
    if search is None:
        return None  # the post may still be on its way: read the window once it has closed
    claim = _take_over(rt, kind, snap, ledger, leased)
    if claim is None:
        return Result.DUPLICATE  # another reconciler (or the late worker) got there first
    lookup = ask_history(
        rt,
        budget,
        calls,
        kind.destination(claim),
        search,
        (
            (snap.reference, claim.subject_version if kind.fences_subject else None),
            (ledger.reference, claim.ledger_version),
        ),
        delivery_id=claim.delivery_id,
        occurrence_at=claim.occurrence_at,
        **{kind.id_field: snap.id},
        **leased.fields,
    )
    post = verdict(
        lookup,
        data.get(SubjectField.ON_AMBIGUOUS, "hold"),
        claim.attempts,
        rt.settings.max_attempts,
    )
    if post is None:
        return None
    if post.outcome is Outcome.AMBIGUOUS:
        result = hold_unconfirmed(rt, claim, post.code, post.detail)
    else:
        result = finalize(rt, claim, post)
    report_outcome(rt, claim, post, result)
    return result


def verdict(lookup: Lookup, policy: Any, attempts: int, max_attempts: int) -> PostResult | None:
    """What the conversation's history (Slack's, or Teams' through Graph) means for a
    claimed occurrence, the same for every kind: DELIVERED (found), FAILED (absent after
    `max_attempts`), RETRY_LATER (absent: another attempt after a backoff), AMBIGUOUS
    (unreadable and the policy holds: park it `unconfirmed`), or None (history could not be
    read now: ask again later)."""
    if lookup.witness is Witness.TRY_LATER:
        return None
    if lookup.witness is Witness.FOUND:
        return PostResult(
            Outcome.DELIVERED, ts=lookup.ts, detail="found in the conversation's history"
        )
    if lookup.witness is Witness.UNREADABLE and policy != "retry":
        # Anything but an explicit "retry" holds: never resend on a guess.
        detail = f"history unreadable ({lookup.code}); outcome unverified, not resent"
        return PostResult(Outcome.AMBIGUOUS, lookup.code, detail=detail)
    if attempts >= max_attempts:
        return PostResult(
            Outcome.FAILED, "max_attempts", detail=f"not delivered after {attempts} attempts"
        )
    return PostResult(
        Outcome.RETRY_LATER,
        "not_delivered",
        retry_after=int(backoff(attempts).total_seconds()),
        detail="absent from the conversation's history; released for another attempt",
    )


def _claimed_entry(
    rt: Runtime, kind: Reconciles[Any], snap: Snapshot, leased: Leased
) -> Snapshot | None:
    """The occurrence's ledger entry, if it is `claimed`; otherwise the lease is held for a
    person (processor.held) and None."""
    ledger = rt.db.collection(DELIVERIES).document(leased.delivery_id).get()
    status = (ledger.to_dict() or {}).get(LedgerField.STATUS)
    if status == LedgerStatus.CLAIMED:
        return ledger
    hold_lease(
        rt,
        snap,
        "ledger_mismatch",
        f"{kind.noun}'s ledger entry is {status!r}, not claimed",
        occurrence_at=leased.occurrence_at,
        delivery_id=leased.delivery_id,
        ledger_status=status,
        **{kind.id_field: snap.id},
        **leased.fields,
    )
    return None


def _take_over(
    rt: Runtime, kind: Reconciles[Any], snap: Snapshot, ledger: Snapshot, leased: Leased
) -> Claim[Any] | None:
    landed = take_over_lease(rt, snap, ledger, kind.fences_subject)
    if landed is None:
        return None
    entry = ledger.to_dict() or {}
    return Claim(
        kind,
        kind.taken_over(snap.id, snap.to_dict() or {}, leased, entry),
        snap.id,
        leased.occurrence_at,
        ledger.id,
        int(entry.get(LedgerField.ATTEMPTS) or 1),
        rt.worker_id,
        landed.version(snap.reference),
        landed.version(ledger.reference),
    )


def take_over_lease(rt: Runtime, snap: Snapshot, ledger: Snapshot, fenced: bool) -> Landed | None:
    """Take an expired lease over: the document's `lease` and its ledger entry now name this
    worker, in one batch conditioned on both as read. That fences the old worker, whose late
    finalize fails its preconditions. None when someone else wrote either first; else the
    versions the batch left (the new fence).

    Not `fenced` (a kind whose ledger entry alone fences it, processor.abc.Kind): on the
    entry as read only, and only if the entry's own lease has expired. Every change of owner
    writes the entry (a second reconciler's take-over, the late worker's finalize, a settle
    or fail-held), and every lease write sets its `lease_expires_at`, so the entry read after
    the subject tells an expired lease from one just taken over."""
    now = rt.clock.now()
    if not fenced and not _entry_lease_expired(ledger, now):
        return None
    expires_at = now + timedelta(seconds=rt.settings.lease_seconds)
    batch = NamedBatch(rt.db)
    # A lease taken over is live again: no longer held for a person (processor.held).
    lease = LeasePatch(
        owner=rt.worker_id, expires_at=expires_at, held_since=DELETE, held_code=DELETE
    )
    option = rt.db.write_option(last_update_time=snap.update_time) if fenced else None
    batch.update(
        snap.reference, SubjectWrite(lease=lease).stamped(now).to_document(), option=option
    )
    entry = LedgerWrite(worker=rt.worker_id, lease_expires_at=expires_at, reconciled_at=now)
    batch.update(
        ledger.reference,
        entry.to_document(),
        option=rt.db.write_option(last_update_time=ledger.update_time),
    )
    try:
        return batch.commit()  # pragma: SYNCPOINT lease
    except FailedPrecondition:
        return None


def _entry_lease_expired(ledger: Snapshot, now: datetime) -> bool:
    expires_at = (ledger.to_dict() or {}).get(LedgerField.LEASE_EXPIRES_AT)
    return not isinstance(expires_at, datetime) or expires_at <= now
