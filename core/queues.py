"""The pass's queries over one kind's collection (a `Queue`): what is due, what no shard's
query finds, whose lease expired, and whose lease no query can ever find. One set of
queries for every kind; a kind names its collection and statuses (processor.abc).

Results are materialised: iterating a live stream while doing slow work per document has
crashed inside the client's retry path."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from core.documents.leases import LEASE, LeaseField
from core.documents.subjects import SubjectField
from core.models import CHANNEL_ID, USER_ID
from core.shards import in_range
from core.store import Snapshot

# Firestore's limit on the values of one `not-in` filter.
MAX_EXCLUDED = 10
# Shard queries in flight at once per due query: each waits on Firestore, not on a core.
_SHARD_QUERIES_AT_ONCE = 8


@dataclass(frozen=True)
class Queue:
    """A kind's collection as the pass reads it: documents in a `waiting` status are due at
    `next_run_at`; one under a lease is in `sending` (None: whatever its status, a
    rotation's claimed day). `posts_by`: the fields naming where a document posts (a
    message to a person has `user` and no `channel`)."""

    collection: str
    waiting: tuple[str, ...]
    sending: str | None
    posts_by: tuple[str, ...] = (SubjectField.CHANNEL, SubjectField.TEAMS_CONVERSATION)

    def due(
        self,
        db: firestore.Client,
        now: datetime,
        limit: int,
        *,
        excluding: Sequence[str] = (),
        shards: int = 1,
    ) -> list[Snapshot]:
        """Waiting documents due at `now`, oldest first, at most `limit`, through the
        (status, next_run_at) composite index, over `shards` shards (`_due`). With
        `excluding` (at most MAX_EXCLUDED channels, or people's user ids), none posting
        there, through (status, next_run_at, channel) and, for a kind that posts to people,
        (status, next_run_at, user): a `not-in` never finds a document without its field,
        so each of `posts_by` is read by a query of its own, and Firestore refuses `not-in`
        beside a status's `in`, so that is one query per waiting status, merged."""
        if not excluding:
            return _due(db, self.collection, now, limit, shards, self._waiting())
        found = {
            snap.id: snap
            for status in self._each_status()
            for not_in in self._not_ins(excluding)
            for snap in _due(db, self.collection, now, limit, shards, status, not_in)
        }
        return sorted(found.values(), key=_due_order)[:limit]

    def outside_shards(
        self, db: firestore.Client, now: datetime, limit: int, shards: int
    ) -> list[Snapshot]:
        """Due documents that no shard's due query finds: among the oldest `limit` due,
        those whose `shard` is missing (a writer may store a document straight without
        one), not an integer or outside 0..shards-1. Firestore cannot query for a field a
        document lacks, so they are read through the unsharded (status, next_run_at) index;
        none with one shard, whose due query has no shard filter."""
        if shards == 1:
            return []
        page = _due_in(db, self.collection, now, limit, (self._waiting(),))
        return [snap for snap in page if not in_range(_shard(snap), shards)]

    def expired(self, db: firestore.Client, now: datetime, limit: int) -> list[Snapshot]:
        """Documents under a lease that ran out (the worker died, or its send was
        ambiguous), oldest expiry first, through the (status, lease.expires_at) index."""
        query = db.collection(self.collection).where(
            filter=FieldFilter(LeaseField.EXPIRES_AT.path, "<=", now)
        )
        if self.sending is not None:
            query = query.where(filter=FieldFilter(SubjectField.STATUS, "==", self.sending))
        return list(query.order_by(LeaseField.EXPIRES_AT.path).limit(limit).stream())

    def unusable(self, db: firestore.Client, limit: int) -> list[Snapshot]:
        """Documents `sending` under a lease that `expired` can never find: a `lease` that
        is not a map, or a map whose first key is not a timestamp `expires_at`. Firestore
        orders values of different types (null, bool, number, timestamp, string, ..., map)
        and maps key by key, so all of these sort before the least usable lease or from the
        first map whose `expires_at` is a string (a cursor, unlike a filter, compares
        across types). Through the (status, lease) composite index."""
        query = (
            db.collection(self.collection)
            .where(filter=FieldFilter(SubjectField.STATUS, "==", self.sending))
            .order_by(LEASE)
        )
        least = {LEASE: {LeaseField.EXPIRES_AT.value: datetime(1, 1, 1, tzinfo=UTC)}}
        before = list(query.end_before(least).limit(limit).stream())
        after = query.start_at({LEASE: {LeaseField.EXPIRES_AT.value: ""}}).limit(limit).stream()
        return before + list(after)

    def _waiting(self) -> FieldFilter:
        if len(self.waiting) == 1:
            return FieldFilter(SubjectField.STATUS, "==", self.waiting[0])
        return FieldFilter(SubjectField.STATUS, "in", list(self.waiting))

    def _each_status(self) -> list[FieldFilter]:
        return [FieldFilter(SubjectField.STATUS, "==", status) for status in self.waiting]

    def _not_ins(self, excluding: Sequence[str]) -> list[FieldFilter]:
        """One `not-in` per field of `posts_by` (a user id goes to `user`, where the kind
        posts to people); [""]: nothing left out, only the documents without the field."""
        keys: dict[str, list[str]] = {field: [] for field in self.posts_by}
        for key in excluding:
            keys.setdefault(self._field_of(key), []).append(key)
        return [_not_in(keys[field] or [""], field) for field in self.posts_by]

    def _field_of(self, key: str) -> str:
        """The field a channel key of processor.due_page.channel_of is stored in: a Slack
        user id (where the kind posts to people) in `user`, a Slack conversation in
        `channel`, anything else (a Teams conversation id) in `teams_conversation`."""
        if SubjectField.USER in self.posts_by and USER_ID.match(key):
            return SubjectField.USER.value
        if CHANNEL_ID.match(key) or SubjectField.TEAMS_CONVERSATION not in self.posts_by:
            return SubjectField.CHANNEL.value
        return SubjectField.TEAMS_CONVERSATION.value


def _not_in(excluding: Sequence[str], field: str) -> FieldFilter:
    if len(excluding) > MAX_EXCLUDED:
        raise ValueError(f"at most {MAX_EXCLUDED} channels can be excluded, got {len(excluding)}")
    return FieldFilter(field, "not-in", list(excluding))


def _due(
    db: firestore.Client,
    collection: str,
    now: datetime,
    limit: int,
    shards: int,
    *filters: FieldFilter,
) -> list[Snapshot]:
    """What is due, oldest first, at most `limit`. With SHARDS=1 one query, with no shard
    filter: every document is found, with or without a `shard`. With more, one query per
    shard through the (shard, status, next_run_at) index, run side by side and merged; a
    document without a shard in 0..SHARDS-1 is in none of them: a pass puts a due one in
    its shard first (`Queue.outside_shards`, processor.shard_strays), the doctor the others
    (docs/sharding.md)."""
    if shards == 1:
        return _due_in(db, collection, now, limit, filters)
    shard_filters = [FieldFilter(SubjectField.SHARD, "==", k) for k in range(shards)]
    with ThreadPoolExecutor(max_workers=min(shards, _SHARD_QUERIES_AT_ONCE)) as pool:
        pages = pool.map(
            lambda shard: _due_in(db, collection, now, limit, (shard, *filters)),
            shard_filters,
        )
        merged = [snap for page in pages for snap in page]
    return sorted(merged, key=_due_order)[:limit]


def _due_in(
    db: firestore.Client,
    collection: str,
    now: datetime,
    limit: int,
    filters: tuple[FieldFilter, ...],
) -> list[Snapshot]:
    query = db.collection(collection).where(filter=filters[0])
    query = query.where(filter=FieldFilter(SubjectField.NEXT_RUN_AT, "<=", now))
    for field_filter in filters[1:]:
        query = query.where(filter=field_filter)
    return list(query.order_by(SubjectField.NEXT_RUN_AT).limit(limit).stream())


def _due_order(snap: Snapshot) -> tuple[datetime, str]:
    return (snap.get(SubjectField.NEXT_RUN_AT), snap.id)


def _shard(snap: Snapshot) -> object:
    return (snap.to_dict() or {}).get(SubjectField.SHARD)
