"""An operator's settle actions on a rotation day (`r:<rotation>:<date>`; processor.settle):

- `mark-delivered`: a person saw the turn in the channel; the day stays claimed, recorded as
  sent with that `ts`, never posted again.
- `release`: a person knows it did not go out; the day is opened again and the cursor put
  back on the member whose turn it was (the member order stays as it is now, edits made
  since included), so the next pass posts it again if it is still that day in the team's
  timezone; otherwise that member takes the next turn and the entry ends `skipped`
  (`day_ended`). Refused while the rotation is paused (nothing would post it).

Both refuse a day that is not the rotation's current one: its `last_processed_date`, the
day of its lease if it holds one, and its newest ledger entry must all be that day.

A day that failed definitively was rolled back already: there is nothing to settle (an edit
of the rotation re-opens today).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.documents.deliveries import (
    LedgerField,
    LedgerReason,
    LedgerStatus,
    LedgerWrite,
    entry_post,
    sent_write,
)
from core.documents.leases import LEASE, LeaseField
from core.documents.rotations import RotationField, RotationStatus, RotationWrite
from core.documents.write import DELETE, INCREMENT, UNSET
from core.errors import DocumentError
from core.platform import SLACK
from core.rotation import Rotation
from core.runtime import Runtime
from core.store import newest_entry
from processor.abc import MARK_DELIVERED, Doc, Settle, Writes
from processor.outcome import Result
from processor.settle import SettleRefused


def rotation_settle_writes(rt: Runtime, action: Settle, entry: Doc, data: Doc) -> Writes:
    now, delivery_id = action.at, action.delivery_id
    if entry.get(LedgerField.STATUS) == LedgerStatus.FAILED:
        raise SettleRefused(
            f"rotation day {delivery_id!r} failed and was rolled back: the same member is "
            "next; edit the rotation to post today's turn again"
        )
    rotation_id = str(entry.get(LedgerField.ROTATION_ID))
    _refuse_unless_current_day(rt, delivery_id, entry, rotation_id, data, now)
    if action.name == MARK_DELIVERED:
        return _delivered(entry, action, now)
    return _released(delivery_id, entry, data, now)


def _delivered(entry: dict[str, Any], action: Settle, now: datetime) -> Writes:
    platform = entry_post(entry)[0]
    rotation = RotationWrite(
        lease=DELETE,
        rollback=DELETE,
        last_error=DELETE,
        last_member=entry.get(LedgerField.MEMBER),
        last_sent_at=now,
        last_slack_ts=action.ts if platform == SLACK else UNSET,
        sent_count=INCREMENT,
    )
    # What the post was is on the entry already: its claim pinned it.
    ledger = sent_write(platform, action.ts, now)
    return Writes(rotation, ledger, Result.SENT)


def _released(
    delivery_id: str, entry: dict[str, Any], rotation: dict[str, Any], now: datetime
) -> Writes:
    status = rotation.get(RotationField.STATUS)
    if status != RotationStatus.ACTIVE:
        raise SettleRefused(
            f"rotation {entry.get(LedgerField.ROTATION_ID)!r} is {status!r}: a "
            f"released {delivery_id!r} would never be posted; resume the rotation first"
        )
    # The member order as it is now, edits included (an edit may have come after the day
    # was held): only the cursor moves back, onto the member whose turn it was.
    stored_rollback = rotation.get(RotationField.ROLLBACK)
    stored_members = rotation.get(RotationField.MEMBERS)
    rollback: dict[str, Any] = stored_rollback if isinstance(stored_rollback, dict) else {}
    members: list[Any] = stored_members if isinstance(stored_members, list) else []
    member = entry.get(LedgerField.MEMBER)
    cursor = members.index(member) if member in members else rotation.get(RotationField.CURSOR, 0)
    update = RotationWrite(
        last_processed_date=rollback.get(RotationField.LAST_PROCESSED_DATE),
        cursor=cursor,
        lease=DELETE,
        rollback=DELETE,
        next_run_at=now,
    )
    # A day already over in the team's timezone cannot be posted any more: the member takes
    # the next turn instead, and the entry ends `skipped` rather than `released` for good.
    if _today(entry, rotation, now) != entry.get(LedgerField.OCCURRENCE_DATE):
        ledger = LedgerWrite(
            status=LedgerStatus.SKIPPED, reason=LedgerReason.DAY_ENDED, skipped_at=now
        )
        return Writes(update, ledger, Result.SKIPPED)
    released = LedgerWrite(status=LedgerStatus.RELEASED, retry_at=now)
    return Writes(update, released, Result.RELEASED)


def _refuse_unless_current_day(
    rt: Runtime,
    delivery_id: str,
    entry: dict[str, Any],
    rotation_id: str,
    data: dict[str, Any],
    now: datetime,
) -> None:
    """Only the day the rotation is on may be settled: its `last_processed_date`, the day of
    its lease if it holds one, and its newest ledger entry. A later day that was claimed and
    rolled back (rate limited, failed) puts `last_processed_date` back, but its entry says
    the rotation went past this day. New day entries are only written together with the
    rotation, so the caller's precondition on the rotation read covers this answer too."""
    day = entry.get(LedgerField.OCCURRENCE_DATE)
    stored_lease = data.get(LEASE)
    lease: dict[str, Any] = stored_lease if isinstance(stored_lease, dict) else {}
    marks = (
        data.get(RotationField.LAST_PROCESSED_DATE),
        lease.get(LeaseField.OCCURRENCE_DATE, day),
        newest_entry(rt.db, LedgerField.ROTATION_ID, rotation_id, LedgerField.OCCURRENCE_DATE),
    )
    if any(mark != day for mark in marks):
        current = max((str(mark) for mark in marks if mark is not None), default=None)
        raise SettleRefused(
            f"delivery {delivery_id!r} is not the current day of rotation {rotation_id!r}: "
            f"the rotation is on {current!r} (delivery 'r:{rotation_id}:{current}'); "
            "settle that one instead"
        )


def _today(entry: dict[str, Any], data: dict[str, Any], now: datetime) -> str:
    """The team's local date now, to tell whether the entry's day is over."""
    rotation_id = entry.get(LedgerField.ROTATION_ID)
    try:
        return Rotation.from_document(str(rotation_id), data).today(now).isoformat()
    except DocumentError as exc:
        raise SettleRefused(
            f"rotation {rotation_id!r} cannot take turns as stored "
            f"({exc.code}: {exc.message}); fix the document first"
        ) from None
