"""The gates of a send to a person (CONTRACT.md, "Messages to people and categories"): a
scheduled message's (messages.claim) or an event's (events.notify, events.claim).

One function decides (`held_back`), in this order: already sent for this occurrence, opted
out, quiet window, daily cap. It reads nothing and takes the time it is given: the claims,
the dry run (messages.preview) and `POST /preview` (composer.preview) call it on the same
documents (`Gates`), so a preview cannot check a gate the real send does not apply. A send
with no `category` (or to a channel) passes every gate but the first. A send whose
`category` names no `categories` document (deleted since it was written, or stored straight
into Firestore) has gates nobody can know: `held_back` raises DocumentError
`unknown_category` (core.documents.categories), as it raises `invalid_category` for a
category it cannot read, and the claim ends it `failed` with that code.

What the gates read is one document per person, `people/{user}`, beside the categories: a
pass reads them for its whole due page in one batched `get_all` (`read_gates`), and carries
each claim's reservation forward (`Gates.carry`), so a person costs one document read per
pass however many messages they are due. Their opt-outs are on that document too (written
there by `PUT /preferences`, beside `preferences/{user}`, in one batch).

What a send reserves (`reserve`), in its claim's own commit:
- Quiet window (`quiet_window_hours` N > 0): held back within N hours after the claim of
  another quiet-window send to the person that was not given back (`quiet_sends`: delivered,
  or not settled yet). A category with N = 0 is exempt both ways: never held back, never
  holds. (A claim precedes its post by seconds: the window runs from the claim, so that a
  delivered send writes nothing more and the pass's read stays exact.)
- Daily cap: the ids of the sends counted for (category, local day of the occurrence in the
  message's timezone); held back once the count reaches `daily_cap`.

Every gated claim and every gated skip is committed under the version of `people/{user}` its
gates read (`Reservation`, in the same batch): a claim writes what its send reserves
(`reserve`), and one that reserves nothing, like a skip, writes the person's opt-outs back as
they were read (Firestore keeps the version of a document a write leaves unchanged). Two
claims that both read the same version cannot both land; an opt-out, an opt-in or a
give-back written since the read fails the claim or the skip whole, and the occurrence is
planned again on the next pass, against what changed (`POST /events` decides again at
once).

What the send's finalize does with its reservation (`settled_fields`): delivered, or ambiguous and
unconfirmed, both stay as reserved (no write); proven never to have reached Slack (a
definitive error, a rate limit or reconciliation that found it absent, all released or
failed), both are given back. A pass learns of a give-back when Slack answers (`Gates.sent`),
before its finalize is written: from then on the pass's gates see the person without that
hold, and read their document again before deciding their next send, since the give-back's
write moves the version.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from google.cloud import firestore

from core.documents.categories import CategoryField, known_category, quiet_window_hours
from core.documents.deliveries import LedgerReason, LedgerStatus
from core.documents.people import Holds, PersonField
from core.documents.subjects import SubjectField
from core.named_batch import Landed, NamedBatch
from core.platform import Outcome
from core.schedule import zone
from core.store import CATEGORIES, PEOPLE, is_document_id

ALREADY_SENT = "already_sent"  # a preview's word for the first gate (no new entry is written)
# Ledger statuses that settle (or hold) their occurrence: it is never sent again.
_SETTLED = (LedgerStatus.SENT, LedgerStatus.SKIPPED, LedgerStatus.CLAIMED, LedgerStatus.UNCONFIRMED)
# How long a day's cap counts are kept on the person's document (older days are dropped).
_CAP_DAYS_KEPT = 3
# The latest quiet-window sends kept on the person's document: only the latest one not given
# back decides the window, and a give-back removes its own.
_QUIET_SENDS_KEPT = 8


class Gated(Protocol):
    """What the gates know of a send: to whom, of what category, on whose local days (the
    daily cap's), and what its claim reserved (`holds`)."""

    @property
    def user(self) -> str | None: ...

    @property
    def category(self) -> str | None: ...

    @property
    def timezone(self) -> str: ...

    @property
    def holds(self) -> Holds: ...


@dataclass(frozen=True)
class PersonRead:
    """A person's `people` document as the gates know it: its fields, and the version a
    reservation is conditioned on (None: no such document yet; the reservation creates it)."""

    ref: firestore.DocumentReference
    data: dict[str, Any]
    version: Any = None


@dataclass(frozen=True)
class GateDocs:
    """What the gates read for one message to a person: the category (None: no such
    document; empty when no gate applies) and the person's `people` document (`read`: None
    when no gate applies)."""

    category: dict[str, Any] | None = field(default_factory=dict)
    read: PersonRead | None = None

    @property
    def person(self) -> dict[str, Any]:
        return self.read.data if self.read is not None else {}


def gated(message: Gated) -> bool:
    """Whether the person's gates apply (beyond "already sent"): a person and a category."""
    return message.user is not None and message.category is not None


class Gates:
    """The gates' documents for some messages, as one batched read found them, kept current
    for the reader's own claims: a landed claim's reservation is carried forward (`carry`)
    with the version it left; a send that gave its holds back (`sent`) is left out of what
    the gates see, and its person is read again (with `db`) before their next decision; a
    dry run or a preview plays its sends forward (`assume_sent`) as the claims of a real
    pass would reserve them. Shared by a pass's delivery threads."""

    def __init__(
        self,
        categories: dict[str, dict[str, Any] | None],
        people: dict[str, PersonRead],
        db: firestore.Client | None = None,
    ):
        self._categories = categories
        self._people = people
        self._db = db
        self._lock = threading.Lock()
        # user -> {delivery id: (category, holds)} given back in this pass, and the people
        # whose document moved since it was read (a give-back's write is on its way).
        self._given_back: dict[str, dict[str, tuple[str, Holds]]] = {}
        self._stale: set[str] = set()

    def covers(self, message: Gated) -> bool:
        """Whether this read has what `message`'s gates need (a page's read covers its own)."""
        if not gated(message):
            return True
        return message.user in self._people and message.category in self._categories

    def docs(self, message: Gated) -> GateDocs:
        """What `message`'s gates decide on; its category None when no document has that
        id (or none can: `held_back` raises `unknown_category`)."""
        if not gated(message):
            return GateDocs()
        assert message.user is not None and message.category is not None
        self._read_again(message.user)
        with self._lock:
            read = self._people.get(message.user)
            given = self._given_back.get(message.user, {})
            category = self._categories.get(message.category)
        return GateDocs(category, _without(read, given) if read is not None and given else read)

    def carry(self, user: str, fields: dict[str, Any], version: Any, delivery_id: str) -> None:
        """A claim's reservation of `fields` on `user`'s document landed, leaving `version`."""
        with self._lock:
            read = self._people[user]
            self._people[user] = PersonRead(read.ref, read.data | fields, version)
            self._given_back.get(user, {}).pop(delivery_id, None)  # reserved again

    def sent(self, send: Gated, delivery_id: str, outcome: Outcome) -> None:
        """Slack answered `send`'s post with `outcome`: a send proven never to have reached
        Slack gives its holds back (its finalize writes that), and the rest of the pass
        sees the person without them from now on."""
        if send.user is None or send.category is None or not settled_fields(send, "", outcome):
            return
        with self._lock:
            if send.user not in self._people:  # read apart from this pass's page
                return
            self._given_back.setdefault(send.user, {})[delivery_id] = (send.category, send.holds)
            self._stale.add(send.user)

    def _read_again(self, user: str) -> None:
        """A person whose document moved under a give-back is read again, once."""
        if self._db is None or user not in self._stale:
            return
        with self._lock:
            self._stale.discard(user)
            ref = self._people[user].ref
        [snap] = self._db.get_all([ref])
        fresh = PersonRead(ref, snap.to_dict() or {}, snap.update_time if snap.exists else None)
        with self._lock:
            self._people[user] = fresh

    def assume_sent(
        self, message: Gated, occurrence_at: datetime, delivery_id: str, now: datetime
    ) -> None:
        """Play a send forward: what its claim would reserve, as the next gates see it."""
        if message.user is None or message.user not in self._people:
            return
        _, fields = reserve(message, occurrence_at, delivery_id, self.docs(message), now)
        with self._lock:
            read = self._people[message.user]
            self._people[message.user] = PersonRead(read.ref, read.data | fields, read.version)


@dataclass(frozen=True)
class Reservation:
    """The write of a gated claim or skip on the person's `people` document, in its own
    batch under the version the gates read (`read`; none: the document did not exist, and
    is created): what the claim reserves (`fields`, `reserve`), or, reserving nothing, their
    opt-outs as read, which leaves the document and its version as they are. A claim or a
    skip whose person's document moved since fails its whole batch; one that lands is
    carried forward on `gates` for the rest of the pass (`landed`)."""

    gates: Gates
    user: str
    read: PersonRead
    fields: dict[str, Any]
    delivery_id: str

    def write(self, batch: NamedBatch) -> None:
        fields = self.fields or _unchanged(self.read.data)
        if self.read.version is None:
            batch.create(self.read.ref, fields)
        else:
            option = firestore.Client.write_option(last_update_time=self.read.version)
            batch.update(self.read.ref, fields, option=option)

    def landed(self, landed: Landed) -> None:
        """The batch landed, leaving the person's document at its version."""
        self.gates.carry(self.user, self.fields, landed.version(self.read.ref), self.delivery_id)


def reservation(
    gates: Gates,
    send: Gated,
    docs: GateDocs,
    occurrence_at: datetime,
    delivery_id: str,
    now: datetime,
) -> tuple[Holds, Reservation | None]:
    """What a claim of `send` that passed the gates on `docs` reserves: its Holds, and the
    write of the person's document (None: no gate applies)."""
    holds, fields = reserve(send, occurrence_at, delivery_id, docs, now)
    return holds, under_version(gates, send, docs, delivery_id, fields)


def under_version(
    gates: Gates,
    send: Gated,
    docs: GateDocs,
    delivery_id: str,
    fields: dict[str, Any] | None = None,
) -> Reservation | None:
    """The write that commits a decision of `send`'s gates (a claim's reservation, or a
    skip: no `fields`) under the version of the person's document they were decided on."""
    if docs.read is None or send.user is None:
        return None
    return Reservation(gates, send.user, docs.read, fields or {}, delivery_id)


def read_gates(db: firestore.Client, messages: Iterable[Gated | Mapping[str, Any]]) -> Gates:
    """The gates' documents for `messages` (or due messages' stored fields): one batched
    read of each distinct category and person among them."""
    keys = [key for m in messages if (key := _gate_key(m)) is not None]
    categories = sorted({category for _, category in keys})
    users = sorted({user for user, _ in keys})
    refs = [db.collection(CATEGORIES).document(c) for c in categories]
    refs += [db.collection(PEOPLE).document(u) for u in users]
    found: dict[str, dict[str, Any] | None] = {}
    people: dict[str, PersonRead] = {}
    for snap in db.get_all(refs) if refs else ():
        if snap.reference.parent.id == CATEGORIES:
            found[snap.id] = (snap.to_dict() or {}) if snap.exists else None  # None: unknown
        else:
            version = snap.update_time if snap.exists else None
            people[snap.id] = PersonRead(snap.reference, snap.to_dict() or {}, version)
    return Gates(found, people, db)


def _gate_key(message: Gated | Mapping[str, Any]) -> tuple[str, str] | None:
    """(user, category) when the person's gates apply and can be read."""
    if isinstance(message, Mapping):  # a due message's or event's stored fields (same names)
        user, category = message.get(SubjectField.USER), message.get(SubjectField.CATEGORY)
    else:
        user, category = message.user, message.category
    if not isinstance(user, str) or not is_document_id(user) or not isinstance(category, str):
        return None
    return (user, category) if is_document_id(category) else None


def held_back(
    message: Gated,
    occurrence_at: datetime,
    delivery_id: str,
    docs: GateDocs,
    now: datetime,
    ledger_status: str | None = None,
) -> str | None:
    """The first gate that holds this occurrence back (`already_sent`, then a LedgerReason:
    `opted_out`, `quiet_window`, `daily_cap`); None when it may be sent. `ledger_status`: its
    ledger entry's status, if one exists (the claim learns it from its `create()` instead).
    DocumentError when the category's gates cannot be known: `unknown_category` (no such
    document), `invalid_category` (unreadable)."""
    if ledger_status in _SETTLED:
        return ALREADY_SENT
    if not gated(message):
        return None
    assert message.category is not None
    category = known_category(message.category, docs.category)
    opted_out = docs.person.get(PersonField.OPTED_OUT)
    may_opt_out = category.get(CategoryField.OPT_OUT_ALLOWED) is not False
    if may_opt_out and isinstance(opted_out, list) and message.category in opted_out:
        return LedgerReason.OPTED_OUT
    hours = _quiet_hours(category)
    if hours and _in_quiet_window(docs.person, delivery_id, hours, now):
        return LedgerReason.QUIET_WINDOW
    cap = category.get(CategoryField.DAILY_CAP)
    if isinstance(cap, int) and not isinstance(cap, bool):
        counted = _day_ids(docs.person, message, occurrence_at) - {delivery_id}
        if len(counted) >= cap:
            return LedgerReason.DAILY_CAP
    return None


def reserve(
    message: Gated, occurrence_at: datetime, delivery_id: str, docs: GateDocs, now: datetime
) -> tuple[Holds, dict[str, Any]]:
    """What a claim that passed the gates reserves: its Holds, and the person document's
    fields to write in the claim's commit (empty: nothing to reserve)."""
    if not gated(message):
        return Holds(), {}
    assert message.category is not None
    category = known_category(message.category, docs.category)
    fields: dict[str, Any] = {}
    quiet = bool(_quiet_hours(category))
    if quiet:
        sends = _map(docs.person.get(PersonField.QUIET_SENDS)) | {delivery_id: now}
        latest = sorted(sends.items(), key=lambda item: _instant(item[1]))[-_QUIET_SENDS_KEPT:]
        fields[PersonField.QUIET_SENDS.value] = dict(latest)
    cap_day = None
    cap = category.get(CategoryField.DAILY_CAP)
    if isinstance(cap, int) and not isinstance(cap, bool):
        cap_day = local_day(message, occurrence_at)
        caps = _map(docs.person.get(PersonField.CAPS))
        days = _map(caps.get(message.category))
        kept = {d: ids for d, ids in sorted(days.items())[-_CAP_DAYS_KEPT:] if d != cap_day}
        ids = sorted(_day_ids(docs.person, message, occurrence_at) | {delivery_id})
        fields[PersonField.CAPS.value] = caps | {message.category: kept | {cap_day: ids}}
    return Holds(quiet, cap_day), fields


def settled_fields(message: Gated, delivery_id: str, outcome: Outcome) -> dict[str, Any]:
    """The person document's update (a merge) when the send's outcome is recorded: what its
    claim reserved (`message.holds`) given back when the outcome proves nothing reached
    Slack; nothing otherwise (delivered or ambiguous: both stay reserved)."""
    holds = message.holds
    if not holds or outcome in (Outcome.DELIVERED, Outcome.AMBIGUOUS):
        return {}
    fields: dict[str, Any] = {}
    if holds.quiet:
        fields[PersonField.QUIET_SENDS.value] = {delivery_id: firestore.DELETE_FIELD}
    if holds.cap_day is not None:
        assert message.category is not None
        removed = firestore.ArrayRemove([delivery_id])
        fields[PersonField.CAPS.value] = {message.category: {holds.cap_day: removed}}
    return fields


def settled_writes(
    send: Gated, delivery_id: str, outcome: Outcome
) -> tuple[tuple[str, str, dict[str, Any]], ...]:
    """The writes beside a send's outcome (processor.abc.Writes.others) for what its claim
    reserved on the person's gates: their `people` document's merge, or none."""
    fields = settled_fields(send, delivery_id, outcome)
    return ((PEOPLE, send.user, fields),) if fields and send.user is not None else ()


def local_day(message: Gated, occurrence_at: datetime) -> str:
    """The local day (the message's timezone) a daily cap counts an occurrence on."""
    return occurrence_at.astimezone(zone(message.timezone)).date().isoformat()


def _quiet_hours(category: Mapping[str, Any]) -> float:
    """0: exempt. DocumentError `invalid_category` when unreadable (NaN, Infinity...)."""
    return quiet_window_hours(category)


def _in_quiet_window(person: dict[str, Any], delivery_id: str, hours: float, now: datetime) -> bool:
    """Whether another quiet-window send's claim, not given back, is less than `hours` old
    (one nothing ever settles holds the window only that long, too)."""
    window = timedelta(hours=hours)
    sends = _map(person.get(PersonField.QUIET_SENDS))
    claimed = [at for d, at in sends.items() if d != delivery_id and isinstance(at, datetime)]
    return any(now < at + window for at in claimed)


def _day_ids(person: dict[str, Any], message: Gated, occurrence_at: datetime) -> set[str]:
    days = _map(_map(person.get(PersonField.CAPS)).get(message.category or ""))
    ids = days.get(local_day(message, occurrence_at))
    return {i for i in ids if isinstance(i, str)} if isinstance(ids, list) else set()


def _unchanged(person: dict[str, Any]) -> dict[str, Any]:
    """A write that leaves the person's document as read: their opt-outs (none: an empty
    list, the same meaning)."""
    return {PersonField.OPTED_OUT.value: person.get(PersonField.OPTED_OUT, [])}


def _without(read: PersonRead, given: Mapping[str, tuple[str, Holds]]) -> PersonRead:
    """The person as the gates see them once the holds `given` back are gone (whether or not
    their give-back's write has landed yet), at the version read."""
    data = dict(read.data)
    quiet = _map(data.get(PersonField.QUIET_SENDS))
    caps = {c: _map(days) for c, days in _map(data.get(PersonField.CAPS)).items()}
    for delivery_id, (category, holds) in given.items():
        if holds.quiet:
            quiet.pop(delivery_id, None)
        days = caps.get(category, {})
        if holds.cap_day is not None and isinstance(days.get(holds.cap_day), list):
            days[holds.cap_day] = [i for i in days[holds.cap_day] if i != delivery_id]
    if PersonField.QUIET_SENDS in data:
        data[PersonField.QUIET_SENDS.value] = quiet
    if PersonField.CAPS in data:
        data[PersonField.CAPS.value] = caps
    return PersonRead(read.ref, data, read.version)


def _instant(value: Any) -> float:
    return value.timestamp() if isinstance(value, datetime) else 0.0


def _map(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}
