"""The gates of a message to a person (CONTRACT.md, "Messages to people and categories").

One function decides (`held_back`), in this order: already sent for this occurrence, opted
out, quiet window, daily cap. It reads nothing and takes the time it is given: the claim
(messages.claim), the dry run (messages.preview) and `POST /preview` (composer.preview) call
it on the documents they read (`read_gates`: one batched read of the category, the person's
preferences and their `people` document), so a preview cannot check a gate the real send
does not apply. A message with no `category` (or to a channel) passes every gate but the
first.

What a send reserves (`reserve`) is written in the claim's own commit, under the version of
`people/{user}` the claim read: two claims that both read the same version cannot both
land, and the loser is planned again on the next pass, against the winner's reservation.
- Quiet window (`quiet_window_hours` N > 0): held back while another quiet-window send to
  the person is claimed and unsettled (`quiet_held`), or was delivered less than N hours ago
  (`quiet_sent_at`). A category with N = 0 is exempt both ways: never held back, never holds.
- Daily cap: the ids of the sends counted for (category, local day of the occurrence in the
  message's timezone); held back once the count reaches `daily_cap`.

What the send's finalize does with them (`settled_fields`): delivered, the window moves to
now and the cap stays counted; proven never to have reached Slack (a definitive error, a
rate limit or reconciliation that found it absent, all released or failed), both are given
back; ambiguous or unconfirmed, both are kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from google.cloud import firestore

from core.documents.categories import CategoryField
from core.documents.deliveries import LedgerReason, LedgerStatus
from core.documents.people import Holds, PersonField
from core.documents.preferences import PreferenceField
from core.models import Message
from core.schedule import zone
from core.slack import Outcome
from core.store import CATEGORIES, PEOPLE, PREFERENCES, Snapshot, is_document_id

ALREADY_SENT = "already_sent"  # a preview's word for the first gate (no new entry is written)
# Ledger statuses that settle (or hold) their occurrence: it is never sent again.
_SETTLED = (LedgerStatus.SENT, LedgerStatus.SKIPPED, LedgerStatus.CLAIMED, LedgerStatus.UNCONFIRMED)
# How long a day's cap counts are kept on the person's document (older days are dropped).
_CAP_DAYS_KEPT = 3


@dataclass(frozen=True)
class GateDocs:
    """What the gates read for one message to a person: the category (empty when missing:
    defaults), the person's preferences, and their `people` document as read (`snap`, whose
    version the claim's reservation is conditioned on)."""

    category: dict[str, Any] = field(default_factory=dict)
    preferences: dict[str, Any] = field(default_factory=dict)
    person: dict[str, Any] = field(default_factory=dict)
    snap: Snapshot | None = None


def gated(message: Message) -> bool:
    """Whether the person's gates apply (beyond "already sent"): a person and a category."""
    return message.user is not None and message.category is not None


@dataclass
class Gates:
    """The gates' documents for some messages, as one batched read found them: categories,
    preferences and `people` documents by id. A dry run or a preview plays its sends
    forward on it (`assume_sent`), as the claims of a real pass would reserve them."""

    categories: dict[str, Snapshot]
    preferences: dict[str, Snapshot]
    people: dict[str, Snapshot]
    assumed: dict[str, dict[str, Any]] = field(default_factory=dict)  # user: person fields

    def docs(self, message: Message) -> GateDocs:
        if not gated(message) or message.category not in self.categories:
            return GateDocs()
        assert message.user is not None and message.category is not None
        person = self.people[message.user]
        return GateDocs(
            self.categories[message.category].to_dict() or {},
            self.preferences[message.user].to_dict() or {},
            (person.to_dict() or {}) | self.assumed.get(message.user, {}),
            person,
        )

    def assume_sent(
        self, message: Message, occurrence_at: datetime, delivery_id: str, now: datetime
    ) -> None:
        """Play a send forward: what its claim would reserve, as the next gates see it."""
        if message.user is None:
            return
        _, fields = reserve(message, occurrence_at, delivery_id, self.docs(message), now)
        self.assumed[message.user] = self.assumed.get(message.user, {}) | fields


def read_gates(db: firestore.Client, messages: list[Message]) -> Gates:
    """The gates' documents for `messages`: one batched read of each distinct category,
    preferences and people document among them."""
    wanted = [m for m in messages if gated(m) and is_document_id(m.category or "")]
    categories = {m.category for m in wanted if m.category is not None}
    users = {m.user for m in wanted if m.user is not None}
    refs = [db.collection(CATEGORIES).document(c) for c in sorted(categories)]
    for user in sorted(users):
        refs += [db.collection(PREFERENCES).document(user), db.collection(PEOPLE).document(user)]
    found: dict[str, dict[str, Snapshot]] = {CATEGORIES: {}, PREFERENCES: {}, PEOPLE: {}}
    for snap in db.get_all(refs) if refs else ():
        found[snap.reference.parent.id][snap.id] = snap
    return Gates(found[CATEGORIES], found[PREFERENCES], found[PEOPLE])


def held_back(
    message: Message,
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
    opted_out = docs.preferences.get(PreferenceField.OPTED_OUT)
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
    message: Message, occurrence_at: datetime, delivery_id: str, docs: GateDocs, now: datetime
) -> tuple[Holds, dict[str, Any]]:
    """What a claim that passed the gates reserves: its Holds, and the person document's
    fields to write in the claim's commit (empty: nothing to reserve)."""
    if not gated(message):
        return Holds(), {}
    fields: dict[str, Any] = {}
    quiet = bool(_quiet_hours(docs.category))
    if quiet:
        held = _map(docs.person.get(PersonField.QUIET_HELD))
        fields[PersonField.QUIET_HELD.value] = held | {delivery_id: now}
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


def settled_fields(
    message: Message, delivery_id: str, outcome: Outcome, now: datetime
) -> dict[str, Any]:
    """The person document's update (a merge) when the send's outcome is recorded: what its
    claim reserved (`message.holds`) recorded, given back or kept (see the module's doc)."""
    holds = message.holds
    if not holds or outcome in (Outcome.AMBIGUOUS,):
        return {}
    fields: dict[str, Any] = {}
    if holds.quiet:
        fields[PersonField.QUIET_HELD.value] = {delivery_id: firestore.DELETE_FIELD}
        if outcome is Outcome.DELIVERED:
            fields[PersonField.QUIET_SENT_AT.value] = now
    if holds.cap_day is not None and outcome is not Outcome.DELIVERED:
        assert message.category is not None
        removed = firestore.ArrayRemove([delivery_id])
        fields[PersonField.CAPS.value] = {message.category: {holds.cap_day: removed}}
    return fields


def local_day(message: Message, occurrence_at: datetime) -> str:
    """The local day (the message's timezone) a daily cap counts an occurrence on."""
    return occurrence_at.astimezone(zone(message.timezone)).date().isoformat()


def _quiet_hours(category: dict[str, Any]) -> float:
    hours = category.get(CategoryField.QUIET_WINDOW_HOURS)
    if isinstance(hours, bool) or not isinstance(hours, int | float) or hours <= 0:
        return 0.0
    return float(hours)


def _in_quiet_window(person: dict[str, Any], delivery_id: str, hours: float, now: datetime) -> bool:
    window = timedelta(hours=hours)
    held = _map(person.get(PersonField.QUIET_HELD))
    # Another quiet-window send claimed and not yet settled holds the window as a delivered
    # one would, from its claim (so a hold nothing ever settles cannot hold it for ever).
    others = [at for d, at in held.items() if d != delivery_id and isinstance(at, datetime)]
    if any(now < at + window for at in others):
        return True
    sent = person.get(PersonField.QUIET_SENT_AT)
    return isinstance(sent, datetime) and now < sent + window


def _day_ids(person: dict[str, Any], message: Message, occurrence_at: datetime) -> set[str]:
    days = _map(_map(person.get(PersonField.CAPS)).get(message.category or ""))
    ids = days.get(local_day(message, occurrence_at))
    return {i for i in ids if isinstance(i, str)} if isinstance(ids, list) else set()


def _map(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}
