"""Operator tools: see the deliveries that need a person, and settle them with a reason.

    python -m targets.operator list [--status claimed,unconfirmed,failed] [--limit 50]
    python -m targets.operator mark-delivered DELIVERY_ID --ts 1700000000.000100 --reason "..."
    python -m targets.operator release DELIVERY_ID --reason "..."
    python -m targets.operator fail-held COLLECTION/ID --reason "..."  (messages, rotations, events)
    python -m targets.operator doctor [--fix] [--json]

`mark-delivered` is for an occurrence a person saw in the channel (unconfirmed, failed or
stuck): it is finalized as delivered and never sent again. `release` is for one a person
knows did not go out: it is claimed again by the next pass, through the same ledger entry.
Both record who, when and why on the ledger entry, and refuse an occurrence whose lease is
still live (a worker is sending it right now). Both act only on the occurrence the message
(or rotation) is on now; `processor.settle` applies them to every kind.
`doctor` lists the stored documents the processor will never send, and why
(`processor.doctor`). Settings come from the environment."""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from core.directory import display_names
from core.documents.deliveries import LedgerField
from core.documents.errors import ErrorField
from core.error_help import help_for
from core.runtime import Runtime, runtime_for
from core.settings import Settings
from core.store import DELIVERIES
from processor.abc import MARK_DELIVERED, RELEASE, Settle
from processor.doctor import run_doctor
from processor.fail_held import FailHeldRefused, fail_held
from processor.settle import NEEDS_A_PERSON, SettleRefused, settle
from targets.kinds import KINDS


def list_deliveries(
    db: firestore.Client, statuses: tuple[str, ...] = NEEDS_A_PERSON, limit: int = 50
) -> list[dict[str, Any]]:
    """The ledger entries in `statuses`, oldest occurrence first, each with the error
    catalog's words for its code (`help`: title and action, the channel by name)."""
    status_in = FieldFilter(LedgerField.STATUS, "in", list(statuses))
    query = db.collection(DELIVERIES).where(filter=status_in)
    rows = [{"delivery_id": s.id, **(s.to_dict() or {})} for s in query.limit(limit).stream()]
    names = display_names(db, {r[LedgerField.CHANNEL] for r in rows if r.get(LedgerField.CHANNEL)})
    rows = [{**row, "help": _help(row, names)} for row in rows]
    return sorted(rows, key=lambda r: str(r.get(LedgerField.OCCURRENCE_AT)))


def _help(row: dict[str, Any], names: dict[str, str]) -> dict[str, str] | None:
    """The catalog's words for an entry's error code (else its reason); None without either."""
    error = row.get(LedgerField.ERROR)
    code = error.get(ErrorField.CODE) if isinstance(error, dict) else None
    code = code or row.get(LedgerField.REASON)
    if not isinstance(code, str):
        return None
    channel = row.get(LedgerField.CHANNEL)
    where = names.get(channel, channel) if isinstance(channel, str) else "the conversation"
    return vars(help_for(code).filled(where))


def mark_delivered(rt: Runtime, delivery_id: str, ts: str, reason: str, by: str) -> None:
    settle(rt, KINDS, Settle(MARK_DELIVERED, delivery_id, reason, by, rt.clock.now(), ts))


def release(rt: Runtime, delivery_id: str, reason: str, by: str) -> None:
    settle(rt, KINDS, Settle(RELEASE, delivery_id, reason, by, rt.clock.now()))


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
    marked.add_argument(
        "--ts", required=True, help="the post seen: its Slack ts, or its Teams activity id"
    )
    marked.add_argument("--reason", required=True)
    released = sub.add_parser("release", help="a person knows it did not go out: resend")
    released.add_argument("delivery_id")
    released.add_argument("--reason", required=True)
    held = sub.add_parser("fail-held", help="end a lease reconciliation holds: nothing is sent")
    held.add_argument("path", help="scheduled_messages/ID, rotations/ID or events/ID")
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
            return run_doctor(rt, KINDS, apply=args.fix, as_json=args.json)
        if args.command == "list":
            statuses = tuple(s.strip() for s in args.status.split(",") if s.strip())
            for row in list_deliveries(rt.db, statuses, args.limit):
                print(json.dumps(row, default=str, sort_keys=True))
        elif args.command == "fail-held":
            fail_held(rt, KINDS, args.path, args.reason, args.by)
        elif args.command == "mark-delivered":
            mark_delivered(rt, args.delivery_id, args.ts, args.reason, args.by)
        else:
            release(rt, args.delivery_id, args.reason, args.by)
    except (SettleRefused, FailHeldRefused) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
