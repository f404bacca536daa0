"""`POST /events` to a person decides their gates under the version of `people/{user}` it
read (processor.gates): an opt-out answered before the claim lands fails a claim that
reserves nothing, an opt-in answered before a skip lands fails the skip, and the request
decides again on what the person now says."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable
from datetime import timedelta

from core.models import event_id
from core.store import DELIVERIES, EVENTS, PEOPLE
from emulator.slack_standin import Fault
from events.kind import EVENT_KIND
from targets.kinds import run_pass
from tests.fixtures.api import call
from tests.fixtures.deliver import deliver_one
from tests.fixtures.people import opt_out, seed_category
from tests.fixtures.runtime import make_runtime
from tests.support.interleave import orchestrate


def _race(api, db, name: str, start: Callable[[str], None], write: Callable[[str], None]):
    """Every interleaving of `POST /events` to a person of its own (paused before its
    commit: the SYNCPOINT `name`) and `write` changing their opt-outs, the person starting
    as `start` left them: (user, key, answer) for each interleaving."""
    arrivals = itertools.count()
    rounds: list[tuple[str, str]] = []
    answers: dict[str, str] = {}

    def person() -> str:
        if next(arrivals) % 2 == 0:  # the first to arrive seeds this interleaving's person
            user = f"U0EVER{len(rounds)}"
            start(user)
            rounds.append((user, f"{user}:done"))
        return rounds[-1][0]

    def post():
        user = person()
        body = {"key": f"{user}:done", "user": user, "text": "done", "category": "updates"}
        status, answer = call(api, "POST", "/events", body)
        assert status == 201
        answers[user] = answer["status"]

    def change():
        write(person())

    counts = orchestrate(post, change, name=name)
    assert counts == (2, 1) and len(rounds) == 3
    return [(user, key, answers[user]) for user, key in rounds]


def _entry(db, key):
    ledger_id = "e:" + hashlib.sha256(key.encode()).hexdigest()
    return db.collection(DELIVERIES).document(ledger_id).get()


def _landed_before_write(db, user, key):
    """Whether the event's ledger entry was created before the person's last opt-out
    write (the gates' own writes leave their document unchanged, or precede it)."""
    return _entry(db, key).create_time < db.collection(PEOPLE).document(user).get().update_time


def test_an_opt_out_racing_an_events_claim(api, db, slack):
    seed_category(db, "updates")  # no quiet window, no cap: the claim reserves nothing
    rounds = _race(
        api, db, "claim_new", lambda u: opt_out(db, u), lambda u: opt_out(db, u, "updates")
    )

    posted = slack.delivery_ids()
    for user, key, answer in rounds:
        entry = _entry(db, key)
        if entry.id in posted:
            assert answer == "sent" and _landed_before_write(db, user, key), user
        else:
            assert answer == "skipped" and entry.get("reason") == "opted_out", user
    assert {answer for _, _, answer in rounds} == {"sent", "skipped"}


def test_an_opt_in_racing_an_events_skip(api, db, slack):
    seed_category(db, "updates")
    rounds = _race(
        api, db, "event_unsent", lambda u: opt_out(db, u, "updates"), lambda u: opt_out(db, u)
    )

    posted = slack.delivery_ids()
    for user, key, answer in rounds:
        entry = _entry(db, key)
        if answer == "skipped":
            assert entry.get("reason") == "opted_out" and entry.id not in posted, user
            assert _landed_before_write(db, user, key), user
        else:
            assert answer == "sent" and entry.id in posted, user
    assert {answer for _, _, answer in rounds} == {"sent", "skipped"}


def test_an_opt_in_racing_a_released_events_skip_on_its_retry(api, settings, db, clock, slack):
    """An event released by a rate limit, then opted out of: its retry by a pass is held
    back, unless the opt-in lands before that skip does; then the next pass sends it."""
    seed_category(db, "updates")
    arrivals = itertools.count()
    rounds: list[tuple[str, str]] = []

    def person() -> str:
        if next(arrivals) % 2 == 0:
            user = f"U0ERET{len(rounds)}"
            slack.inject(Fault("rate_limit", retry_after=30, times=1))
            body = {"key": f"{user}:done", "user": user, "text": "done", "category": "updates"}
            assert call(api, "POST", "/events", body)[1]["status"] == "sending"  # released
            opt_out(db, user, "updates")
            clock.advance(timedelta(seconds=31))  # its retry is due
            rounds.append((user, f"{user}:done"))
        return rounds[-1][0]

    def retry():
        person()
        snap = db.collection(EVENTS).document(event_id(rounds[-1][1])).get()
        deliver_one(make_runtime(settings, db, clock, "worker-a"), EVENT_KIND, snap)

    def change():
        opt_out(db, person())

    counts = orchestrate(retry, change, name="event_retry_skip")
    assert counts == (2, 1) and len(rounds) == 3
    run_pass(make_runtime(settings, db, clock, "worker-b"))  # retries what lost

    posted = slack.delivery_ids()
    outcomes = set()
    for user, key in rounds:
        entry = _entry(db, key)
        outcomes.add(entry.get("status"))
        if entry.get("status") == "skipped":
            assert entry.get("reason") == "opted_out" and entry.id not in posted, user
            people = db.collection(PEOPLE).document(user).get()
            assert entry.update_time < people.update_time, user  # the skip before the opt-in
        else:
            assert entry.get("status") == "sent" and entry.id in posted, user
    assert outcomes == {"sent", "skipped"}
