"""The operator's `doctor`: which stored documents the processor will never send, and why.

    python -m targets.operator doctor [--fix] [--json]

It reads every `scheduled_messages` and `rotations` document and reports each one that no
pass will ever send as it is stored: a status the processor does not know, a missing or
non-timestamp `next_run_at` (the due query never finds it), a document the processor's own
parsing rejects (unknown timezone, invalid rule, bad channel...: the code is the one the
processor would record in `last_error.code`), or a lease that reconciliation can never
settle (`sending` without a lease map, a lease that is not a map). Verdicts come from the
processor's own parsing (`Message.from_document`, `Rotation.from_document`), so the doctor
and the processor cannot disagree.

`--fix` writes only what can be computed: `next_run_at` of a waiting one-off (its
`send_at`), of a waiting series (its first occurrence at or after now; earlier ones are
neither sent nor recorded, as when a series is resumed) and of an active rotation (now: the
processor computes the real turn). Everything else is left to a person."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from google.api_core.exceptions import FailedPrecondition
from google.cloud import firestore

from core.documents.leases import LEASE, LeaseField
from core.documents.messages import WAITING, MessageField, Status
from core.documents.rotations import RotationField, RotationStatus
from core.documents.subjects import SubjectField, SubjectWrite
from core.errors import DocumentError
from core.models import Message
from core.rotation import Rotation
from core.runtime import Runtime
from core.schedule import resume_next_run_at
from core.store import MESSAGES, ROTATIONS, Snapshot

MESSAGE_STATUSES = frozenset(Status)
ROTATION_STATUSES = frozenset(RotationStatus)
PAGE = 300


@dataclass(frozen=True)
class Finding:
    """One document the processor will never send as stored. `next_run_at`: what `--fix`
    sets; None when only a person can put the document right."""

    collection: str
    id: str
    code: str
    reason: str
    next_run_at: datetime | None = None

    def as_json(self, fixed: bool) -> dict[str, Any]:
        fix = self.next_run_at.isoformat() if self.next_run_at else None
        return {
            "collection": self.collection,
            "id": self.id,
            "code": self.code,
            "reason": self.reason,
            "fix_next_run_at": fix,
            "fixed": fixed,
        }

    def line(self, fixed: bool) -> str:
        if fixed:
            action = f"fixed: next_run_at set to {self.next_run_at:%Y-%m-%dT%H:%M:%SZ}"
        elif self.next_run_at is not None:
            action = f"--fix sets next_run_at to {self.next_run_at:%Y-%m-%dT%H:%M:%SZ}"
        else:
            action = "needs a person"
        return f"{self.collection}/{self.id}: {self.code}: {self.reason} [{action}]"


def examine_message(doc_id: str, data: dict[str, Any], now: datetime) -> Finding | None:
    status = data.get(MessageField.STATUS)
    if not isinstance(status, str) or status not in MESSAGE_STATUSES:
        return _unknown_status(MESSAGES, doc_id, status)
    waiting = status in WAITING and data.get(MessageField.DELETED) is not True
    if not waiting and status != Status.SENDING:
        return None  # settled, deleted, parked for a person, or paused: nothing to send
    try:
        message = Message.from_document(doc_id, data)
    except DocumentError as exc:
        return Finding(MESSAGES, doc_id, exc.code, f"{exc.message} (the processor rejects it)")
    if status == Status.SENDING:
        return _lease_finding(MESSAGES, doc_id, data.get(LEASE), LeaseField.OCCURRENCE_AT)
    if isinstance(data.get(MessageField.NEXT_RUN_AT), datetime):
        return None
    if message.recurrence is None:
        send_at = data.get(MessageField.SEND_AT)
        due = send_at if isinstance(send_at, datetime) else None
    else:
        try:
            due = resume_next_run_at(message.recurrence, now)
        except DocumentError as exc:
            return Finding(MESSAGES, doc_id, exc.code, f"{exc.message} (the processor rejects it)")
    return _unscheduled(MESSAGES, doc_id, data, due)


def examine_rotation(doc_id: str, data: dict[str, Any], now: datetime) -> Finding | None:
    status = data.get(RotationField.STATUS)
    if not isinstance(status, str) or status not in ROTATION_STATUSES:
        return _unknown_status(ROTATIONS, doc_id, status)
    if data.get(LEASE):  # a claimed day (the claim skips it): reconciliation settles it
        return _lease_finding(ROTATIONS, doc_id, data.get(LEASE), LeaseField.OCCURRENCE_DATE)
    if status == RotationStatus.PAUSED:
        return None
    try:
        Rotation.from_document(doc_id, data)
    except DocumentError as exc:
        return Finding(ROTATIONS, doc_id, exc.code, f"{exc.message} (the processor rejects it)")
    if isinstance(data.get(RotationField.NEXT_RUN_AT), datetime):
        return None
    return _unscheduled(ROTATIONS, doc_id, data, now)


def _unknown_status(collection: str, doc_id: str, status: Any) -> Finding:
    known = MESSAGE_STATUSES if collection == MESSAGES else ROTATION_STATUSES
    return Finding(
        collection,
        doc_id,
        "unknown_status",
        f"status {status!r} is none of {', '.join(sorted(known))}: the processor never looks at it",
    )


def _unscheduled(
    collection: str, doc_id: str, data: dict[str, Any], due: datetime | None
) -> Finding:
    stored = data.get(SubjectField.NEXT_RUN_AT)
    code = "missing_next_run_at" if stored is None else "invalid_next_run_at"
    what = "missing" if stored is None else f"{stored!r}, not a timestamp"
    reason = f"next_run_at is {what}: the due query never finds it"
    if due is None:
        reason += " (and none can be computed: no send_at, or the series has ended)"
    return Finding(collection, doc_id, code, reason, due)


def _lease_finding(
    collection: str, doc_id: str, lease: Any, occurrence: LeaseField
) -> Finding | None:
    """A held document is settled by reconciliation once its lease expires, which the
    expired-lease query finds by `lease.expires_at`: without that, nobody ever settles it."""
    if lease is None:
        return Finding(
            collection, doc_id, "missing_lease", "sending without a lease: never settled"
        )
    if not isinstance(lease, dict):
        return Finding(collection, doc_id, "invalid_lease", f"lease {lease!r} is not a map")
    if not isinstance(lease.get(LeaseField.EXPIRES_AT), datetime) or lease.get(occurrence) is None:
        return Finding(
            collection,
            doc_id,
            "invalid_lease",
            f"lease needs expires_at (a timestamp) and {occurrence}, got {lease!r}",
        )
    return None


def scan(db: firestore.Client, now: datetime) -> Iterator[tuple[Snapshot, Finding]]:
    """Every finding in both collections, in document id order, a page at a time."""
    for collection, examine in ((MESSAGES, examine_message), (ROTATIONS, examine_rotation)):
        for snap in _all(db, collection):
            finding = examine(snap.id, snap.to_dict() or {}, now)
            if finding is not None:
                yield snap, finding


def _all(db: firestore.Client, collection: str) -> Iterator[Snapshot]:
    """Paged: each page is read whole before the caller writes (no write inside a live
    stream)."""
    query = db.collection(collection).order_by("__name__").limit(PAGE)
    last = None
    while True:
        page = list((query.start_after(last) if last is not None else query).stream())
        yield from page
        if len(page) < PAGE:
            return
        last = page[-1]


def fix(rt: Runtime, snap: Snapshot, finding: Finding) -> bool:
    """Set the computed `next_run_at`, conditioned on the document as examined: False when
    there is nothing to set or the document changed since (run the doctor again)."""
    if finding.next_run_at is None:
        return False
    try:
        snap.reference.update(
            SubjectWrite(next_run_at=finding.next_run_at).stamped(rt.clock.now()).to_document(),
            option=rt.db.write_option(last_update_time=snap.update_time),
        )
    except FailedPrecondition:
        return False
    return True


def run_doctor(rt: Runtime, *, apply: bool, as_json: bool) -> int:
    """Print each finding (a line, or a JSON object per line), fixing what `apply` allows.
    Exit status 0 when nothing is left unsendable, 1 when something is."""
    left = 0
    for snap, finding in scan(rt.db, rt.clock.now()):
        fixed = apply and fix(rt, snap, finding)
        left += not fixed
        print(json.dumps(finding.as_json(fixed)) if as_json else finding.line(fixed))
    return 1 if left else 0
