"""Operator tools: see the deliveries that need a person, and settle them with a reason.

    python -m targets.operator list [--status claimed,unconfirmed,failed] [--limit 50]
    python -m targets.operator mark-delivered DELIVERY_ID --ts 1700000000.000100 --reason "..."
    python -m targets.operator release DELIVERY_ID --reason "..."
    python -m targets.operator fail-held scheduled_messages/ID --reason "..."
    python -m targets.operator doctor [--fix] [--json]

`mark-delivered` is for an occurrence a person saw in the channel (unconfirmed, failed or
stuck): it is finalized as delivered and never sent again. `release` is for one a person
knows did not go out: it is claimed again by the next pass, through the same ledger entry.
Both record who, when and why on the ledger entry, and refuse an occurrence whose lease is
still live (a worker is sending it right now). Rotation days (`r:…` ids) are settled by
`rotations.operator`. Both act only on the occurrence the message (or rotation) is on now.
`doctor` lists the stored documents the processor will never send, and why
(`processor.doctor`). Settings come from the environment."""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from datetime import datetime
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from core import logs
from core.errors import AppError, DocumentError
from core.models import LedgerStatus, Message, Status, message_delivery_id
from core.runtime import Runtime, runtime_for
from core.settings import Settings
from core.store import DELIVERIES, MESSAGES
from messages.advance import after_occurrence
from processor.doctor import run_doctor
from processor.fail_held import FailHeldRefused, fail_held
from processor.held import live_until
from rotations.operator import DayActionRefused, mark_day_delivered, release_day

NEEDS_A_PERSON = (LedgerStatus.CLAIMED, LedgerStatus.UNCONFIRMED, LedgerStatus.FAILED)
SETTLEABLE_MESSAGE = (Status.SENDING, Status.UNCONFIRMED, Status.FAILED)


class OperatorError(AppError):
    """An operator action that cannot be applied; the message says why."""


def list_deliveries(
    db: firestore.Client, statuses: tuple[str, ...] = NEEDS_A_PERSON, limit: int = 50
) -> list[dict[str, Any]]:
    query = db.collection(DELIVERIES).where(filter=FieldFilter("status", "in", list(statuses)))
    rows = [{"delivery_id": s.id, **(s.to_dict() or {})} for s in query.limit(limit).stream()]
    return sorted(rows, key=lambda r: str(r.get("occurrence_at")))


def mark_delivered(rt: Runtime, delivery_id: str, ts: str, reason: str, by: str) -> None:
    if delivery_id.startswith("r:"):
        return mark_day_delivered(rt, delivery_id, ts, reason, by)
    now = rt.clock.now()

    def updates(message: Message, occurrence: datetime) -> tuple[dict[str, Any], dict[str, Any]]:
        msg = after_occurrence(message, occurrence) | {
            "last_slack_ts": ts,
            "last_sent_at": now,
            "sent_count": firestore.Increment(1),
            "last_error": firestore.DELETE_FIELD,
        }
        return msg, {"status": LedgerStatus.SENT, "slack_ts": ts, "sent_at": now}

    _settle(rt, delivery_id, "mark_delivered", reason, by, updates)


def release(rt: Runtime, delivery_id: str, reason: str, by: str) -> None:
    if delivery_id.startswith("r:"):
        return release_day(rt, delivery_id, reason, by)
    now = rt.clock.now()

    def updates(message: Message, occurrence: datetime) -> tuple[dict[str, Any], dict[str, Any]]:
        msg = {
            "status": Status.RECURRING if message.is_recurring else Status.PENDING,
            "next_run_at": now,
            "occurrence_at": occurrence,
            "lease": firestore.DELETE_FIELD,
        }
        return msg, {"status": LedgerStatus.RELEASED, "retry_at": now}

    _settle(rt, delivery_id, "release", reason, by, updates)


def _settle(rt: Runtime, delivery_id: str, action: str, reason: str, by: str, updates: Any) -> None:
    if not reason.strip():
        raise OperatorError("a reason is required: it is recorded on the ledger entry")
    now = rt.clock.now()
    ledger_ref = rt.db.collection(DELIVERIES).document(delivery_id)
    ledger = ledger_ref.get()
    entry = ledger.to_dict()
    if entry is None:
        raise OperatorError(f"no delivery {delivery_id!r}")
    if entry.get("status") not in NEEDS_A_PERSON:
        raise OperatorError(
            f"delivery {delivery_id!r} is {entry.get('status')!r}: nothing to settle"
        )
    lease_end = entry.get("lease_expires_at")
    if (
        entry.get("status") == LedgerStatus.CLAIMED
        and isinstance(lease_end, datetime)
        and lease_end > now
    ):
        raise OperatorError(
            f"delivery {delivery_id!r} is being sent under a live lease until {lease_end}"
        )
    message_ref = rt.db.collection(MESSAGES).document(str(entry.get("message_id")))
    snap = message_ref.get()
    data = snap.to_dict()
    if data is None:
        raise OperatorError(f"message {entry.get('message_id')!r} of {delivery_id!r} is gone")
    _refuse_unless_current(rt, delivery_id, entry, snap.id, data, now)
    try:
        message = Message.from_document(snap.id, data)
    except DocumentError as exc:
        raise OperatorError(
            f"message {snap.id!r} cannot be sent as stored ({exc.code}: {exc.message}); "
            "fix the document first"
        ) from None
    message_update, ledger_update = updates(message, entry["occurrence_at"])
    record = {"action": action, "reason": reason, "by": by, "at": now}
    batch = rt.db.batch()
    batch.update(
        message_ref,
        message_update | {"updated_at": now, "version": firestore.Increment(1)},
        option=rt.db.write_option(last_update_time=snap.update_time),
    )
    batch.update(
        ledger_ref,
        ledger_update | {"operator": record},
        option=rt.db.write_option(last_update_time=ledger.update_time),
    )
    batch.commit()
    logs.warning(
        f"operator {action}",
        delivery_id=delivery_id,
        message_id=snap.id,
        occurrence_at=entry["occurrence_at"],
        status=ledger_update["status"],
        reason=reason,
        by=by,
    )


def _refuse_unless_current(
    rt: Runtime,
    delivery_id: str,
    entry: dict[str, Any],
    message_id: str,
    data: dict[str, Any],
    now: datetime,
) -> None:
    """Only the occurrence the message is on may be settled: a `sending` message's lease
    occurrence, or a parked (`unconfirmed`, `failed`) message's newest ledger entry. Settling
    an older one would take the message back from a newer occurrence (perhaps in flight)
    and post the old one as well. New ledger entries of a message are only ever written
    together with the message, so the caller's precondition on the message read covers
    this answer too."""
    status = data.get("status")
    if status not in SETTLEABLE_MESSAGE:
        waiting = f", next due at {data.get('next_run_at')}" if status in Status.WAITING else ""
        raise OperatorError(
            f"delivery {delivery_id!r} is not the current occurrence of message "
            f"{message_id!r}: the message is {status!r}{waiting}; it has moved on"
        )
    stored_lease = data.get("lease")
    lease: dict[str, Any] = stored_lease if isinstance(stored_lease, dict) else {}
    if status == Status.SENDING:
        current = lease.get("occurrence_at")
    else:
        current = newest_occurrence(rt.db, message_id)
    if current != entry.get("occurrence_at"):
        on = message_delivery_id(message_id, current) if isinstance(current, datetime) else None
        raise OperatorError(
            f"delivery {delivery_id!r} is not the current occurrence of message "
            f"{message_id!r}: the message is {status!r} on {on!r}; settle that one instead"
        )
    lease_end = live_until(lease, now)
    if status == Status.SENDING and lease_end is not None:
        raise OperatorError(
            f"delivery {delivery_id!r} is being sent under a live lease until {lease_end}"
        )


def newest_occurrence(db: firestore.Client, message_id: str) -> Any:
    """The occurrence of the message's newest ledger entry (None without one), through the
    (message_id, occurrence_at desc) index that the deliveries listing uses."""
    query = (
        db.collection(DELIVERIES)
        .where(filter=FieldFilter("message_id", "==", message_id))
        .order_by("occurrence_at", direction=firestore.Query.DESCENDING)
        .limit(1)
    )
    return next((s.get("occurrence_at") for s in query.stream()), None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m targets.operator",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    listing = sub.add_parser("list", help="deliveries that need a person")
    listing.add_argument("--status", default=",".join(NEEDS_A_PERSON))
    listing.add_argument("--limit", type=int, default=50)
    marked = sub.add_parser("mark-delivered", help="a person saw it in the channel")
    marked.add_argument("delivery_id")
    marked.add_argument("--ts", required=True, help="the Slack ts of the message seen")
    marked.add_argument("--reason", required=True)
    released = sub.add_parser("release", help="a person knows it did not go out: resend")
    released.add_argument("delivery_id")
    released.add_argument("--reason", required=True)
    held = sub.add_parser("fail-held", help="end a lease reconciliation holds: nothing is sent")
    held.add_argument("path", help="scheduled_messages/ID or rotations/ID")
    held.add_argument("--reason", required=True)
    for action in (marked, released, held):
        action.add_argument("--by", default=getpass.getuser(), help="who decides (recorded)")
    doctor = sub.add_parser("doctor", help="stored documents the processor will never send")
    doctor.add_argument("--fix", action="store_true", help="set next_run_at where computable")
    doctor.add_argument("--json", action="store_true", help="one JSON object per line")
    args = parser.parse_args(argv)
    rt = runtime_for(Settings.from_env())
    try:
        if args.command == "doctor":
            return run_doctor(rt, apply=args.fix, as_json=args.json)
        if args.command == "list":
            statuses = tuple(s.strip() for s in args.status.split(",") if s.strip())
            for row in list_deliveries(rt.db, statuses, args.limit):
                print(json.dumps(row, default=str, sort_keys=True))
        elif args.command == "fail-held":
            fail_held(rt, args.path, args.reason, args.by)
        elif args.command == "mark-delivered":
            mark_delivered(rt, args.delivery_id, args.ts, args.reason, args.by)
        else:
            release(rt, args.delivery_id, args.reason, args.by)
    except (OperatorError, DayActionRefused, FailHeldRefused) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
