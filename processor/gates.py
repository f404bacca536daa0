"""The gates of a send to a person (CONTRACT.md, "Messages to people and categories"): a
scheduled message's (messages.claim) or an event's (events.notify, events.claim).

One function decides (`held_back`), in this order: already sent for this occurrence, opted
out, quiet window, daily cap. It reads nothing and takes the time it is given: the claims,
the dry run (messages.preview) and `POST /preview` (composer.preview) call it on the same
documents (`Gates`), so a preview cannot check a gate the real send does not apply. A send
with no `category` (or to a channel) passes every gate but the first.

What the gates read is one document per person, `people/{user}`, beside the categories: a
pass reads them for its whole due page in one batched `get_all` (`read_gates`), and carries
each claim's reservation forward (`Gates.carry`), so a person costs one document read per
pass however many messages they are due. Their opt-outs are on that document too (written
there by `PUT /preferences`, beside `preferences/{user}`, in one batch).

What a send reserves (`reserve`) is written in the claim's own commit, under the version of
`people/{user}` the gates read: two claims that both read the same version cannot both
land, and the loser is planned again on the next pass, against the winner's reservation. An
opt-out written meanwhile fails the claim the same way.
- Quiet window (`quiet_window_hours` N > 0): held back within N hours after the claim of
  another quiet-window send to the person that was not given back (`quiet_sends`: delivered,
  or not settled yet). A category with N = 0 is exempt both ways: never held back, never
  holds. (A claim precedes its post by seconds: the window runs from the claim, so that a
  delivered send writes nothing more and the pass's read stays exact.)
- Daily cap: the ids of the sends counted for (category, local day of the occurrence in the
  message's timezone); held back once the count reaches `daily_cap`.

What the send's finalize does with them (`settled_fields`): delivered, or ambiguous and
unconfirmed, both stay as reserved (no write); proven never to have reached Slack (a
definitive error, a rate limit or reconciliation that found it absent, all released or
failed), both are given back.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from google.cloud import firestore

from core.documents.categories import CategoryField, quiet_window_hours
from core.documents.deliveries import LedgerReason, LedgerStatus
from core.documents.messages import MessageField
from core.documents.people import Holds, PersonField
from core.schedule import zone
from core.slack import Outcome
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
    """What the gates read for one message to a person: the category (empty when missing:
    defaults) and the person's `people` document (`read`: None when no gate applies)."""

    category: dict[str, Any] = field(default_factory=dict)
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
    with the version it left; a dry run or a preview plays its sends forward (`assume_sent`)
    as the claims of a real pass would reserve them. Shared by a pass's delivery threads."""

    def __init__(self, categories: dict[str, dict[str, Any]], people: dict[str, PersonRead]):
        self._categories = categories
        self._people = people
        self._lock = threading.Lock()

    def covers(self, message: Gated) -> bool:
        """Whether this read has what `message`'s gates need (a page's read covers its own)."""
        if not gated(message):
            return True
        return message.user in self._people and message.category in self._categories

    def docs(self, message: Gated) -> GateDocs:
        if not gated(message) or message.category not in self._categories:
            return GateDocs()
        assert message.user is not None and message.category is not None
        with self._lock:
            return GateDocs(self._categories[message.category], self._people.get(message.user))

    def carry(self, user: str, fields: dict[str, Any], version: Any) -> None:
        """A claim's reservation of `fields` on `user`'s document landed, leaving `version`."""
        with self._lock:
            read = self._people[user]
            self._people[user] = PersonRead(read.ref, read.data | fields, version)

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
    """What a claim reserves for the person's gates (`reserve`): the fields of their `people`
    document as the claim leaves them, written in the claim's own batch under the version
    the gates read (`read`; none: the document did not exist, and is created). A claim that
    raced another's reservation fails its whole batch; one that lands is carried forward on
    `gates` for the rest of the pass (`landed`)."""

    gates: Gates
    user: str
    read: PersonRead
    fields: dict[str, Any]

    def write(self, batch: firestore.WriteBatch) -> None:
        if self.read.version is None:
            batch.create(self.read.ref, self.fields)
        else:
            option = firestore.Client.write_option(last_update_time=self.read.version)
            batch.update(self.read.ref, self.fields, option=option)

    def landed(self, version: Any) -> None:
        """The claim's batch landed, leaving the person's document at `version`."""
        self.gates.carry(self.user, self.fields, version)


def reservation(
    gates: Gates, send: Gated, occurrence_at: datetime, delivery_id: str, now: datetime
) -> tuple[Holds, Reservation | None]:
    """What a claim of `send` that passed the gates reserves: its Holds, and the write of
    the person's document (None: nothing to reserve)."""
    docs = gates.docs(send)
    holds, fields = reserve(send, occurrence_at, delivery_id, docs, now)
    if not fields or docs.read is None or send.user is None:
        return holds, None
    return holds, Reservation(gates, send.user, docs.read, fields)


def read_gates(db: firestore.Client, messages: Iterable[Gated | Mapping[str, Any]]) -> Gates:
    """The gates' documents for `messages` (or due messages' stored fields): one batched
    read of each distinct category and person among them."""
    keys = [key for m in messages if (key := _gate_key(m)) is not None]
    categories = sorted({category for _, category in keys})
    users = sorted({user for user, _ in keys})
    refs = [db.collection(CATEGORIES).document(c) for c in categories]
    refs += [db.collection(PEOPLE).document(u) for u in users]
    found: dict[str, dict[str, Any]] = {}
    people: dict[str, PersonRead] = {}
    for snap in db.get_all(refs) if refs else ():
        if snap.reference.parent.id == CATEGORIES:
            found[snap.id] = snap.to_dict() or {}  # missing: the contract's defaults
        else:
            version = snap.update_time if snap.exists else None
            people[snap.id] = PersonRead(snap.reference, snap.to_dict() or {}, version)
    return Gates(found, people)


def _gate_key(message: Gated | Mapping[str, Any]) -> tuple[str, str] | None:
    """(user, category) when the person's gates apply and can be read."""
    if isinstance(message, Mapping):  # a due message's or event's stored fields (same names)
        user, category = message.get(MessageField.USER), message.get(MessageField.CATEGORY)
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
    ledger entry's status, if one exists (the claim learns it from its `create()` instead)."""
    if ledger_status in _SETTLED:
        return ALREADY_SENT
    if not gated(message):
        return None
    category = docs.category
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
    fields: dict[str, Any] = {}
    quiet = bool(_quiet_hours(docs.category))
    if quiet:
        sends = _map(docs.person.get(PersonField.QUIET_SENDS)) | {delivery_id: now}
        latest = sorted(sends.items(), key=lambda item: _instant(item[1]))[-_QUIET_SENDS_KEPT:]
        fields[PersonField.QUIET_SENDS.value] = dict(latest)
    cap_day = None
    cap = docs.category.get(CategoryField.DAILY_CAP)
    if isinstance(cap, int) and not isinstance(cap, bool):
        assert message.category is not None
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


def _quiet_hours(category: dict[str, Any]) -> float:
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


def _instant(value: Any) -> float:
    return value.timestamp() if isinstance(value, datetime) else 0.0


def _map(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}
