"""The Firestore store: the client, collection names and the queries every domain uses.

The client reads FIRESTORE_EMULATOR_HOST itself; one client per process is reused across
requests (it holds the gRPC channel)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from google.cloud import firestore
from google.cloud.firestore_v1.base_document import DocumentSnapshot
from google.cloud.firestore_v1.base_query import FieldFilter

from core.documents.events import EventStatus
from core.documents.leases import LEASE, LeaseField
from core.documents.messages import WAITING, MessageField, Status
from core.documents.rotations import RotationField, RotationStatus
from core.documents.subjects import SubjectField
from core.models import USER_ID
from core.shards import in_range

Snapshot = DocumentSnapshot[firestore.DocumentReference]

MESSAGES = "scheduled_messages"
DELIVERIES = "deliveries"
ROTATIONS = "rotations"
CHANNEL_PACING = "channel_pacing"
# People (CONTRACT.md): categories of messages, each person's opt-outs, and notify-once events.
CATEGORIES = "categories"
PREFERENCES = "preferences"
EVENTS = "events"
RESPONSES = "responses"
# What the gates keep per person (core.documents.people): our addition.
PEOPLE = "people"
# Slack interactivity: signatures taken within the 5-minute window (replay refusal).
INTERACTION_SIGNATURES = "interaction_signatures"


_EVENT_PENDING = EventStatus.PENDING.value
_EVENT_SENDING = EventStatus.SENDING.value

# What each collection's due query finds documents waiting in (the statuses a pass sends).
_WAITING = {
    MESSAGES: FieldFilter(MessageField.STATUS, "in", list(WAITING)),
    ROTATIONS: FieldFilter(RotationField.STATUS, "==", RotationStatus.ACTIVE),
    EVENTS: FieldFilter(SubjectField.STATUS, "==", _EVENT_PENDING),
}

# Ids Firestore refuses or reserves (besides any with a `/`): never a stored document's.
_RESERVED_ID = re.compile(r"\.|\.\.|__.*__", re.DOTALL)
_MAX_ID_BYTES = 1500


def is_document_id(text: str) -> bool:
    """Whether `text` can name a document (so a read of it cannot be an invalid request)."""
    return (
        bool(text)
        and "/" not in text
        and not _RESERVED_ID.fullmatch(text)
        and len(text.encode("utf-8", "surrogatepass")) <= _MAX_ID_BYTES
    )


def is_timestamp(value: datetime) -> bool:
    """Whether an aware `value` is an instant Firestore can store and compare (years 1 to
    9999 in UTC: `0001-01-01T00:00+14:00` is not one)."""
    try:
        value.astimezone(UTC)
    except OverflowError:
        return False
    return True


def make_client(project: str) -> firestore.Client:
    return firestore.Client(project=project)


def read_in_order(db: firestore.Client, *refs: firestore.DocumentReference) -> list[Snapshot]:
    """Several documents in one round trip, in the order asked (a batched get answers in
    any order)."""
    found = {snap.reference.path: snap for snap in db.get_all(list(refs))}
    return [found[ref.path] for ref in refs]


def due_messages(
    db: firestore.Client,
    now: datetime,
    limit: int,
    *,
    excluding: Sequence[str] = (),
    shards: int = 1,
) -> list[Snapshot]:
    """Waiting messages due at `now`, oldest first, through the (status, next_run_at)
    composite index, over `shards` shards (`_due`). With `excluding` (at most
    MAX_EXCLUDED channels, or people's user ids), none posting to those channels or people,
    through (status, next_run_at, channel) and (status, next_run_at, user): a `not-in` never
    finds a document without its field, so messages to channels and messages to people are
    read by a query each, and Firestore refuses `not-in` beside the status's `in`, so that is
    one query per waiting status, merged. Materialised: iterating a live stream while doing
    slow work per document has crashed inside the client's retry path."""
    if not excluding:
        return _due(db, MESSAGES, now, limit, shards, _WAITING[MESSAGES])
    people = [key for key in excluding if USER_ID.match(key)]
    channels = [key for key in excluding if key not in people]
    # ([""]: no channel or person left out, only the documents without the field.)
    not_ins = (_not_in(channels or [""]), _not_in(people or [""], MessageField.USER))
    found = {
        snap.id: snap
        for status in WAITING
        for not_in in not_ins
        for snap in _due(
            db,
            MESSAGES,
            now,
            limit,
            shards,
            FieldFilter(MessageField.STATUS, "==", status),
            not_in,
        )
    }
    merged = sorted(found.values(), key=lambda snap: (snap.get(MessageField.NEXT_RUN_AT), snap.id))
    return merged[:limit]


# Firestore's limit on the values of one `not-in` filter.
MAX_EXCLUDED = 10


def _not_in(excluding: Sequence[str], field: str = SubjectField.CHANNEL) -> FieldFilter:
    """The filter leaving out documents whose `field` is one of `excluding` (and any without
    the field)."""
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
    its shard first (`outside_shards`, processor.shard_strays), the doctor the others
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
    merged.sort(key=lambda snap: (snap.get(SubjectField.NEXT_RUN_AT), snap.id))
    return merged[:limit]


# Shard queries in flight at once per due query: each waits on Firestore, not on a core.
_SHARD_QUERIES_AT_ONCE = 8


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


def outside_shards(
    db: firestore.Client, collection: str, now: datetime, limit: int, shards: int
) -> list[Snapshot]:
    """Due documents of `collection` that no shard's due query finds: among the oldest
    `limit` due, those whose `shard` is missing (a writer may store a document straight
    without one), not an integer or outside 0..shards-1. Firestore cannot query for a field
    a document lacks, so they are read through the unsharded (status, next_run_at) index;
    none with one shard, whose due query has no shard filter."""
    if shards == 1:
        return []
    page = _due_in(db, collection, now, limit, (_WAITING[collection],))
    return [snap for snap in page if not in_range(_shard(snap), shards)]


def _shard(snap: Snapshot) -> object:
    return (snap.to_dict() or {}).get(SubjectField.SHARD)


def expired_leases(db: firestore.Client, now: datetime, limit: int) -> list[Snapshot]:
    """Messages still `sending` whose lease ran out: the worker died, or the send was
    ambiguous. Through the (status, lease.expires_at) composite index."""
    query = (
        db.collection(MESSAGES)
        .where(filter=FieldFilter(MessageField.STATUS, "==", Status.SENDING))
        .where(filter=FieldFilter(LeaseField.EXPIRES_AT.path, "<=", now))
        .order_by(LeaseField.EXPIRES_AT.path)
        .limit(limit)
    )
    return list(query.stream())


def unusable_leases(db: firestore.Client, limit: int, collection: str = MESSAGES) -> list[Snapshot]:
    """Messages (or events: `collection`) `sending` under a lease that the expired-lease query
    can never find: a `lease` that is not a map, or a map whose first key is not a timestamp
    `expires_at`. Firestore orders values of different types (null, bool, number, timestamp,
    string, ..., map) and maps key by key, so all of these sort before the least usable lease
    or from the first map whose `expires_at` is a string (a cursor, unlike a filter, compares
    across types). Through the (status, lease) composite index."""
    sending = _EVENT_SENDING if collection == EVENTS else Status.SENDING.value
    query = (
        db.collection(collection)
        .where(filter=FieldFilter(SubjectField.STATUS, "==", sending))
        .order_by(LEASE)
    )
    least = {LEASE: {LeaseField.EXPIRES_AT.value: datetime(1, 1, 1, tzinfo=UTC)}}
    before = list(query.end_before(least).limit(limit).stream())
    after = list(query.start_at({LEASE: {LeaseField.EXPIRES_AT.value: ""}}).limit(limit).stream())
    return before + after


def due_events(
    db: firestore.Client,
    now: datetime,
    limit: int,
    *,
    excluding: Sequence[str] = (),
    shards: int = 1,
) -> list[Snapshot]:
    """Events released for another attempt (`pending`) and due again, oldest first, through
    the (status, next_run_at) index; `excluding` (channels: an event stores the DM it
    posts to) and `shards` as for `due_messages`."""
    filters = [_WAITING[EVENTS]]
    if excluding:
        filters.append(_not_in(excluding))
    return _due(db, EVENTS, now, limit, shards, *filters)


def expired_event_leases(db: firestore.Client, now: datetime, limit: int) -> list[Snapshot]:
    """Events still `sending` whose lease ran out (the request that claimed them died, or
    its send was ambiguous), through the (status, lease.expires_at) index."""
    query = (
        db.collection(EVENTS)
        .where(filter=FieldFilter(SubjectField.STATUS, "==", _EVENT_SENDING))
        .where(filter=FieldFilter(LeaseField.EXPIRES_AT.path, "<=", now))
        .order_by(LeaseField.EXPIRES_AT.path)
        .limit(limit)
    )
    return list(query.stream())


def due_rotations(
    db: firestore.Client,
    now: datetime,
    limit: int,
    *,
    excluding: Sequence[str] = (),
    shards: int = 1,
) -> list[Snapshot]:
    """Active rotations whose next turn is due, oldest first, through the (status,
    next_run_at) index; `excluding` and `shards` as for `due_messages`. Whether the turn is
    really today's (and still open) is decided on the document."""
    filters = [_WAITING[ROTATIONS]]
    if excluding:
        filters.append(_not_in(excluding))
    return _due(db, ROTATIONS, now, limit, shards, *filters)


def expired_rotation_leases(db: firestore.Client, now: datetime, limit: int) -> list[Snapshot]:
    """Rotations holding a claimed day whose lease ran out (paused or not: a claimed day is
    settled either way)."""
    query = (
        db.collection(ROTATIONS)
        .where(filter=FieldFilter(LeaseField.EXPIRES_AT.path, "<=", now))
        .order_by(LeaseField.EXPIRES_AT.path)
        .limit(limit)
    )
    return list(query.stream())
