"""The kinds of send the contract suite runs through the same promises (and a toy kind
defined only here, tests/contract/toy.py), each as a "subject under test": its kind, how a
test makes one of its documents due now (through the way its users do: a document written
as the API or another service stores it, an event through `POST /events`), and what its
stored subject says once it is delivered or failed by hand.

A new kind gets every promise of tests/contract/ by adding a `Subject` to `SUBJECTS`."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from google.cloud import firestore

from core.models import event_delivery_id, event_id, message_delivery_id, rotation_delivery_id
from core.platform import PLATFORMS
from core.store import EVENTS, MESSAGES, ROTATIONS
from events.kind import EVENT_KIND
from messages.kind import MESSAGE_KIND
from processor.abc import AnyKind
from processor.kind_pass import run_kind
from rotations.kind import ROTATION_DAY_KIND
from tests.contract.chats import Chat
from tests.contract.toy import TOY_KIND, TOY_NOTES
from tests.contract.toy import delivery_id as toy_delivery_id
from tests.fixtures.api import call
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import seed_message, seed_series
from tests.fixtures.rotations import seed_rotation

# Markdown, so that a preview shown raw and a post rendered for Slack differ.
TEXT = "Deploy **now**: the _release_ is tagged"
CHANNEL = "C0123ABCD"

_ids = itertools.count()


@dataclass(frozen=True)
class World:
    """What a subject is seeded into and read from: the test's Firestore project, clock,
    chat platform (tests/contract/chats.py: Slack's stand-in or Teams') and `api` target
    client."""

    db: firestore.Client
    clock: Any
    chat: Chat
    api: Any


@dataclass(frozen=True)
class Seeded:
    """One due document: its id, its due occurrence's ledger id, and its path (`fail-held`'s
    argument)."""

    id: str
    delivery_id: str
    path: str
    at: datetime  # the occurrence's instant


@dataclass(frozen=True)
class Subject:
    """A kind under the contract: its `Kind`, how to make one of its documents due now in
    `channel` (with extra stored `fields`), and what its stored document says when its
    occurrence was delivered, or given up by `fail-held`."""

    name: str
    kind: AnyKind
    # Where a worker process finds the kind (tests.support.crash_worker): "module:NAME".
    kind_ref: str
    seed: Callable[[World, str, dict[str, Any]], Seeded]
    delivered: Callable[[dict[str, Any], Seeded], bool]
    failed_by_hand: Callable[[dict[str, Any], Seeded], bool]
    # The SYNCPOINT name of the claim's commit for a document found due (processor.claim):
    # a new ledger entry's, or a released one's claimed again.
    claim_syncpoint: str = "claim"
    # Whether its stored documents may carry `on_ambiguous: retry` (events are always held).
    retry_policy: bool = True
    # Where the `api` target edits one (`PUT`, its id appended); None: it has no edit.
    edit_route: str | None = None
    # The platforms it is sent on here.
    platforms: tuple[str, ...] = PLATFORMS

    def stored(self, world: World, seeded: Seeded) -> dict[str, Any]:
        snap = world.db.collection(self.kind.collection).document(seeded.id).get()
        return snap.to_dict() or {}

    def ledger_entries(self, world: World, seeded: Seeded) -> dict[str, dict[str, Any]]:
        """Every ledger entry of the subject (of any occurrence)."""
        field = self.kind.id_field
        return {k: v for k, v in ledger(world.db).items() if v.get(field) == seeded.id}


def _operator_failed(doc: dict[str, Any]) -> bool:
    return "lease" not in doc and (doc.get("last_error") or {}).get("code") == "operator_failed"


# --- scheduled messages: a one-off, and a daily series' occurrence --------------------------


def _seed_one_off(world: World, channel: str, fields: dict[str, Any]) -> Seeded:
    now = world.clock.now()
    stored = {"text": TEXT, **world.chat.where(channel), **fields}
    mid = seed_message(world.db, send_at=now, next_run_at=now, **stored)
    return Seeded(mid, message_delivery_id(mid, now), f"{MESSAGES}/{mid}", now)


def _seed_series(world: World, channel: str, fields: dict[str, Any]) -> Seeded:
    now = world.clock.now()
    start = now.strftime("%Y-%m-%dT%H:%M:%S")
    stored = {"text": TEXT, **world.chat.where(channel), **fields}
    mid = seed_series(world.db, now, dtstart=start, **stored)
    return Seeded(mid, message_delivery_id(mid, now), f"{MESSAGES}/{mid}", now)


def _post_id_kept(doc: dict[str, Any], field: str) -> bool:
    """A Slack subject keeps its post's `ts` in `field`; a Teams one never writes it (its
    activity id is on the ledger entry)."""
    if doc.get("teams_conversation") is None:
        return bool(doc.get(field))
    return field not in doc


def _one_off_sent(doc: dict[str, Any], seeded: Seeded) -> bool:
    sent = doc.get("status") == "sent" and "lease" not in doc
    return sent and _post_id_kept(doc, "last_slack_ts")


def _series_went_on(doc: dict[str, Any], seeded: Seeded) -> bool:
    """The occurrence sent, the series waiting for its next one."""
    moved_on = isinstance(doc.get("next_run_at"), datetime) and doc["next_run_at"] > seeded.at
    return doc.get("status") == "recurring" and "lease" not in doc and moved_on


def _message_failed(doc: dict[str, Any], seeded: Seeded) -> bool:
    return doc.get("status") == "failed" and _operator_failed(doc)


# --- a rotation's day turn -------------------------------------------------------------------


def _seed_rotation_day(world: World, channel: str, fields: dict[str, Any]) -> Seeded:
    now = world.clock.now()
    rid = seed_rotation(
        world.db,
        f"rotation-{next(_ids)}",
        timezone="UTC",
        send_time=now.strftime("%H:%M"),
        weekdays=list(range(7)),
        next_run_at=now,
        members=list(world.chat.people),
        **{"text": "{member} hosts **today**", **world.chat.where(channel), **fields},
    )
    return Seeded(rid, rotation_delivery_id(rid, now.date()), f"{ROTATIONS}/{rid}", now)


def _day_of(seeded: Seeded) -> str:
    return seeded.delivery_id.rsplit(":", 1)[1]


def _day_posted(doc: dict[str, Any], seeded: Seeded) -> bool:
    """The day's turn taken once: the order moved on by one member."""
    settled = doc.get("last_processed_date") == _day_of(seeded)
    return settled and "lease" not in doc and doc.get("cursor") == 1


def _day_given_up(doc: dict[str, Any], seeded: Seeded) -> bool:
    return doc.get("last_processed_date") == _day_of(seeded) and _operator_failed(doc)


# --- a notify-once event, released by its first send and due again --------------------------


def _seed_released_event(world: World, channel: str, fields: dict[str, Any]) -> Seeded:
    """`POST /events` whose send the platform rate-limits (Retry-After 30): the event is
    released; the clock then moves past its retry, so a pass finds it due."""
    key = f"contract-{next(_ids)}:done"
    world.chat.rate_limited_once(30)
    where = {k: v for k, v in world.chat.where(channel).items() if v is not None}
    status, answer = call(world.api, "POST", "/events", {"key": key, "text": TEXT, **where})
    assert status in (200, 201), answer
    eid = event_id(key)
    seeded = Seeded(eid, event_delivery_id(eid), f"{EVENTS}/{eid}", world.clock.now())
    assert ledger(world.db)[seeded.delivery_id]["status"] == "released"
    if fields:
        world.db.collection(EVENTS).document(eid).update(fields)
    world.clock.advance(timedelta(seconds=31))
    return seeded


def _event_sent(doc: dict[str, Any], seeded: Seeded) -> bool:
    return doc.get("status") == "sent" and "lease" not in doc and _post_id_kept(doc, "slack_ts")


# --- a toy kind, defined only in the tests (tests/contract/toy.py) ---------------------------


def _seed_note(world: World, channel: str, fields: dict[str, Any]) -> Seeded:
    now = world.clock.now()
    ref = world.db.collection(TOY_NOTES).document(f"note-{next(_ids)}")
    stored = {"text": TEXT, **world.chat.where(channel), **fields}
    ref.set({"at": now, "next_run_at": now, "status": "waiting", **stored})
    return Seeded(ref.id, toy_delivery_id(ref.id, now), f"{TOY_NOTES}/{ref.id}", now)


def _note_posted(doc: dict[str, Any], seeded: Seeded) -> bool:
    posted = doc.get("status") == "posted" and "lease" not in doc
    return posted and _post_id_kept(doc, "slack_ts")


_MESSAGES = "messages.kind:MESSAGE_KIND"
SUBJECTS = (
    Subject(
        "one_off",
        MESSAGE_KIND,
        _MESSAGES,
        _seed_one_off,
        _one_off_sent,
        _message_failed,
        edit_route="/messages/",
    ),
    Subject(
        "series",
        MESSAGE_KIND,
        _MESSAGES,
        _seed_series,
        _series_went_on,
        _message_failed,
        edit_route="/messages/",
    ),
    Subject(
        "rotation_day",
        ROTATION_DAY_KIND,
        "rotations.kind:ROTATION_DAY_KIND",
        _seed_rotation_day,
        _day_posted,
        _day_given_up,
        edit_route="/rotations/",
    ),
    Subject(
        "event",
        EVENT_KIND,
        "events.kind:EVENT_KIND",
        _seed_released_event,
        _event_sent,
        _message_failed,
        claim_syncpoint="reclaim",
        retry_policy=False,
    ),
    Subject(
        "toy_note",
        TOY_KIND,
        "tests.contract.toy:TOY_KIND",
        _seed_note,
        _note_posted,
        _message_failed,
    ),
)


def one_pass(rt: Any, subject: Subject, *, dry_run: bool = False) -> dict[str, Any]:
    """The pass over the subject's kind: its expired leases settled, then what is due."""
    return run_kind(rt, subject.kind, dry_run=dry_run)


def on_every_platform(subjects: tuple[Subject, ...] = SUBJECTS) -> list[tuple[str, Subject]]:
    """(platform, subject) for each platform each subject is sent on."""
    return [(platform, s) for s in subjects for platform in s.platforms]
