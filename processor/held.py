"""Leases that reconciliation cannot settle by itself, never left without a way out.

A held lease (the document no longer parses, its ledger entry is not `claimed`, the lease
names no occurrence) gets its `expires_at` pushed RECHECK ahead, so it leaves the head of
the expired-lease page (ordered by `expires_at`) and the leases behind it are settled; it
is looked at again then. `lease.held_since` and `lease.held_code` say since when and why.
Such a state does not heal by itself, so it is escalated (one ERROR line and an alert) the
first time it is held; a person ends it with `python -m targets.operator fail-held`.

Slack history that cannot be read (5xx, rate limits) is asked again at every lease expiry;
once the occurrence has waited HISTORY_ESCALATE_AFTER since its claim it is escalated once
(`history_escalated_at` on the ledger entry), and the operator's `mark-delivered` or
`release` settle it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from google.api_core.exceptions import FailedPrecondition

from core import logs
from core.documents.deliveries import LedgerField, LedgerWrite
from core.documents.leases import LEASE, LeaseField, LeasePatch
from core.documents.subjects import SubjectWrite
from core.documents.write import UNSET
from core.runtime import Runtime
from core.store import DELIVERIES, Snapshot
from processor.escalate import escalate

RECHECK = timedelta(minutes=15)


def live_until(lease: dict[str, Any], now: datetime) -> datetime | None:
    """When a lease a worker is sending under ends; None when it is not live: expired, with
    no end, or held for a person (its pushed-ahead `expires_at` is no worker's)."""
    end = lease.get(LeaseField.EXPIRES_AT)
    if LeaseField.HELD_SINCE in lease or not isinstance(end, datetime) or end <= now:
        return None
    return end


def refuse_live(refused: type[Exception], what: str, lease: dict[str, Any], now: datetime) -> None:
    """`refused` (an operator's refusal) when a worker is sending `what` under `lease` now:
    nobody else may decide its outcome while it may still post."""
    end = live_until(lease, now)
    if end is not None:
        raise refused(f"{what} is being sent under a live lease until {end}")


HISTORY_ESCALATE_AFTER = timedelta(hours=1)


def hold_lease(
    rt: Runtime,
    snap: Snapshot,
    code: str,
    detail: str,
    occurrence_at: datetime | None = None,
    **subject: Any,
) -> None:
    """Hold `snap`'s expired lease for a person: pushed out of the page's head, escalated
    the first time. `subject`: `message_id=` or `rotation_id=`, plus fields for the log."""
    now = rt.clock.now()
    stored = (snap.to_dict() or {}).get(LEASE)
    lease: dict[str, Any] = stored if isinstance(stored, dict) else {}
    since = lease.get(LeaseField.HELD_SINCE)
    first = not isinstance(since, datetime)
    held = LeasePatch(expires_at=now + RECHECK, held_code=code, held_since=now if first else UNSET)
    update = SubjectWrite(lease=held).to_document()
    try:
        snap.reference.update(update, option=rt.db.write_option(last_update_time=snap.update_time))
    except FailedPrecondition:
        return  # written meanwhile: the next pass looks at it as it is then
    if first:
        escalate(
            rt,
            status="held",
            occurrence_at=occurrence_at,
            error_code=code,
            detail=f"{detail}; held for a person (targets.operator fail-held)",
            **subject,
        )
        return
    logs.warning(
        f"still held for a person: {detail}",
        status="held",
        error_code=code,
        held_since=since,
        **subject,
    )


def history_unreadable(
    rt: Runtime,
    delivery_id: str,
    claimed_at: datetime,
    code: str | None,
    occurrence_at: datetime | None = None,
    **subject: Any,
) -> None:
    """Slack history could not be read to the end now (a rate limit, a 5xx, pages left for
    a later pass): a WARNING line, and once the occurrence has waited HISTORY_ESCALATE_AFTER
    since its claim, one escalation."""
    now = rt.clock.now()
    fields = {
        "delivery_id": delivery_id,
        "occurrence_at": occurrence_at,
        "status": "sending",
        "error_code": code,
        **subject,
    }
    if now - claimed_at < HISTORY_ESCALATE_AFTER:
        logs.warning("history not read to the end yet; asking again later", **fields)
        return
    ledger_ref = rt.db.collection(DELIVERIES).document(delivery_id)
    if (ledger_ref.get().to_dict() or {}).get(LedgerField.HISTORY_ESCALATED_AT) is not None:
        logs.warning("history still not read to the end; escalated already", **fields)
        return
    ledger_ref.update(LedgerWrite(history_escalated_at=now).to_document())
    escalate(
        rt,
        status="held",
        occurrence_at=occurrence_at,
        error_code=code,
        detail=(
            f"history not read to the end since the claim at {claimed_at.isoformat()}; "
            "outcome unknown: look in the channel, then targets.operator mark-delivered or "
            "release"
        ),
        delivery_id=delivery_id,
        **subject,
    )
