"""The operator's `doctor`: which stored documents the processor will never send, and why.

    python -m targets.operator doctor [--fix] [--json]

It reads every document of every kind's collection (`scheduled_messages`, `rotations`,
`events`) and reports each one that no pass will ever send as it is stored, as its kind
examines it (processor.abc.Operates.examine): a status the processor does not know, a
missing or non-timestamp `next_run_at` (the due query never finds it), a document the
processor's own parsing rejects (unknown timezone, invalid rule, bad channel...: the code is
the one the processor would record in `last_error.code`), or a lease that reconciliation can
never settle (`sending` without a lease map, a lease that is not a map). It reads every
`categories` document too, and reports each one the gates cannot read (`invalid_category`:
every send of it to a person ends `failed`), and each waiting document to a person whose
`category` names no `categories` document (`unknown_category`: its claim ends it `failed`).
Verdicts come from the processor's own parsing (each kind's, `check_category`,
`unknown_category`), so the doctor and the processor cannot disagree.

`--fix` writes only what can be computed: the `next_run_at` its kind computes for a waiting
document without one (a one-off's `send_at`; a series' first occurrence at or after now,
earlier ones neither sent nor recorded, as when a series is resumed; now for an active
rotation, whose real turn the processor computes, and for a released event); and, with
SHARDS above 1, the `shard` of a document that may still be sent whose shard is missing or
outside 0..SHARDS-1 (the due scan reads only those shards: docs/sharding.md). Everything
else is left to a person."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from google.api_core.exceptions import FailedPrecondition
from google.cloud import firestore

from core.documents.categories import check_category, unknown_category
from core.documents.leases import LeaseField
from core.documents.subjects import SubjectField, SubjectWrite
from core.errors import DocumentError
from core.queues import USER
from core.runtime import Runtime
from core.shards import in_range, shard_of
from core.store import CATEGORIES, Snapshot

if TYPE_CHECKING:
    from processor.abc import Operates

CATEGORY = "category"  # the category a document to a person is sent under
PAGE = 300


@dataclass(frozen=True)
class Finding:
    """One document the processor will never send as stored. `next_run_at` and `shard`: what
    `--fix` sets; both None when only a person can put the document right."""

    collection: str
    id: str
    code: str
    reason: str
    next_run_at: datetime | None = None
    shard: int | None = None

    def as_json(self, fixed: bool) -> dict[str, Any]:
        fix = self.next_run_at.isoformat() if self.next_run_at else None
        return {
            "collection": self.collection,
            "id": self.id,
            "code": self.code,
            "reason": self.reason,
            "fix_next_run_at": fix,
            "fix_shard": self.shard,
            "fixed": fixed,
        }

    def line(self, fixed: bool) -> str:
        sets = []
        if self.next_run_at is not None:
            sets.append(f"next_run_at to {self.next_run_at:%Y-%m-%dT%H:%M:%SZ}")
        if self.shard is not None:
            sets.append(f"shard to {self.shard}")
        if not sets:
            action = "needs a person"
        else:
            action = ("fixed: set " if fixed else "--fix sets ") + " and ".join(sets)
        return f"{self.collection}/{self.id}: {self.code}: {self.reason} [{action}]"


def examine_category(doc_id: str, data: dict[str, Any]) -> Finding | None:
    """A category the gates cannot read: every send of it to a person ends `failed` with the
    same code (`invalid_category`) until a person puts the category right."""
    try:
        check_category(data)
    except DocumentError as exc:
        reason = f"{exc.message} (a send of this category to a person ends failed)"
        return Finding(CATEGORIES, doc_id, exc.code, reason)
    return None


def examine_category_named(
    kind: Operates, doc_id: str, data: dict[str, Any], categories: frozenset[str]
) -> Finding | None:
    """A waiting document to a person whose `category` names no document of `categories`
    (the ids that exist): its claim ends it `failed` (`unknown_category`) until the category
    is created or the document names one that exists."""
    status, user, category = (data.get(f) for f in (SubjectField.STATUS, USER, CATEGORY))
    waiting = status in kind.queue.waiting and not data.get(SubjectField.DELETED)
    if not waiting or user is None or not isinstance(category, str) or category in categories:
        return None
    exc = unknown_category(category)
    reason = f"{exc.message} (a send of it to a person ends failed)"
    return Finding(kind.collection, doc_id, exc.code, reason)


def unknown_status(collection: str, doc_id: str, status: Any, known: Iterable[str]) -> Finding:
    return Finding(
        collection,
        doc_id,
        "unknown_status",
        f"status {status!r} is none of {', '.join(sorted(known))}: the processor never looks at it",
    )


def rejected(collection: str, doc_id: str, exc: DocumentError) -> Finding:
    """A document the processor's own parsing rejects, with the code it would record."""
    return Finding(collection, doc_id, exc.code, f"{exc.message} (the processor rejects it)")


def unscheduled(
    collection: str, doc_id: str, data: dict[str, Any], due: datetime | None
) -> Finding:
    stored = data.get(SubjectField.NEXT_RUN_AT)
    code = "missing_next_run_at" if stored is None else "invalid_next_run_at"
    what = "missing" if stored is None else f"{stored!r}, not a timestamp"
    reason = f"next_run_at is {what}: the due query never finds it"
    if due is None:
        reason += " (and none can be computed: no send_at, or the series has ended)"
    return Finding(collection, doc_id, code, reason, due)


def lease_finding(
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


def examine_shard(
    kind: Operates, doc_id: str, data: dict[str, Any], shards: int, finding: Finding | None
) -> Finding | None:
    """`finding`, or a new one, with the shard `--fix` sets when the due scan would never
    find the document: with SHARDS above 1, a live document whose `shard` is missing or not
    one of 0..SHARDS-1 (written by hand, or before SHARDS changed). With SHARDS=1 the scan
    has no shard filter, so any shard (or none) is found."""
    stored = data.get(SubjectField.SHARD, _MISSING)
    if shards == 1 or not kind.live(data) or in_range(stored, shards):
        return finding
    shard = shard_of(doc_id, shards)
    if finding is not None:  # a person's finding first: its fix comes with the shard's
        return replace(finding, shard=shard) if finding.next_run_at is not None else finding
    code = "missing_shard" if stored is _MISSING else "invalid_shard"
    what = "missing" if stored is _MISSING else f"{stored!r}"
    reason = f"shard is {what}, not one of 0..{shards - 1}: the due scan never finds it"
    return Finding(kind.collection, doc_id, code, reason, shard=shard)


_MISSING = object()


def scan(
    db: firestore.Client, kinds: Sequence[Operates], now: datetime, shards: int = 1
) -> Iterator[tuple[Snapshot, Finding]]:
    """Every finding in each kind's collection, then in `categories`, in document id
    order, a page at a time."""
    categories = frozenset(snap.id for snap in _all(db, CATEGORIES))
    for kind in kinds:
        for snap in _all(db, kind.collection):
            data = snap.to_dict() or {}
            finding = kind.examine(snap.id, data, now) or examine_category_named(
                kind, snap.id, data, categories
            )
            finding = examine_shard(kind, snap.id, data, shards, finding)
            if finding is not None:
                yield snap, finding
    for snap in _all(db, CATEGORIES):
        if (finding := examine_category(snap.id, snap.to_dict() or {})) is not None:
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
    """Set the computed `next_run_at` and `shard`, conditioned on the document as examined:
    False when there is nothing to set or the document changed since (run the doctor again)."""
    if finding.next_run_at is None and finding.shard is None:
        return False
    write = SubjectWrite()
    if finding.next_run_at is not None:
        write = replace(write, next_run_at=finding.next_run_at)
    if finding.shard is not None:
        write = replace(write, shard=finding.shard)
    try:
        snap.reference.update(
            write.stamped(rt.clock.now()).to_document(),
            option=rt.db.write_option(last_update_time=snap.update_time),
        )
    except FailedPrecondition:
        return False
    return True


def run_doctor(rt: Runtime, kinds: Sequence[Operates], *, apply: bool, as_json: bool) -> int:
    """Print each finding (a line, or a JSON object per line), fixing what `apply` allows.
    Exit status 0 when nothing is left unsendable, 1 when something is."""
    left = 0
    for snap, finding in scan(rt.db, kinds, rt.clock.now(), rt.settings.shards):
        fixed = apply and fix(rt, snap, finding)
        left += not fixed
        print(json.dumps(finding.as_json(fixed)) if as_json else finding.line(fixed))
    return 1 if left else 0
