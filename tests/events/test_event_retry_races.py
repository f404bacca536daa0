"""A released event's retry by a pass is fenced by its ledger entry alone: a duplicate
`POST /events` landing between the pass's read of the event and its claim (or its gated
skip) never makes that claim lose, and two passes retrying it at once still post it once."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable
from datetime import timedelta

from core.models import event_id
from core.store import DELIVERIES, EVENTS
from emulator.slack_standin import Fault
from events.kind import EVENT_KIND
from processor.outcome import Result
from tests.fixtures.api import call
from tests.fixtures.deliver import deliver_one
from tests.fixtures.people import opt_out, seed_category
from tests.fixtures.runtime import make_runtime
from tests.support.interleave import orchestrate


def _entry(db, key):
    return db.collection(DELIVERIES).document("e:" + hashlib.sha256(key.encode()).hexdigest())


class Rounds:
    """One released event per interleaving: the first of the two threads to arrive posts it,
    rate limited (`Retry-After` 30), and moves the clock past its retry; the other finds it."""

    def __init__(self, api, db, clock, slack, body, released: Callable[[str], object] = str):
        self.api, self.db, self.clock, self.slack, self.body = api, db, clock, slack, body
        self.released = released  # what happens once it is released, before its retry
        self.arrivals = itertools.count()
        self.keys: list[str] = []

    def key(self) -> str:
        if next(self.arrivals) % 2 == 0:
            key = f"stage-{len(self.keys)}:done"
            self.slack.inject(Fault("rate_limit", retry_after=30, times=1))
            assert call(self.api, "POST", "/events", self.body(key))[1]["status"] == "sending"
            self.released(key)
            self.clock.advance(timedelta(seconds=31))  # its retry is due
            self.keys.append(key)
        return self.keys[-1]

    def retry(self, rt, results: dict[str, list[Result]]) -> None:
        """A pass's retry of this round's event: its read, then its claim (and send)."""
        key = self.key()
        snap = self.db.collection(EVENTS).document(event_id(key)).get()
        results.setdefault(key, []).append(deliver_one(rt, EVENT_KIND, snap)[0])

    def duplicate(self, answers: dict[str, tuple[int, dict[str, object]]]) -> None:
        key = self.key()
        answers[key] = call(self.api, "POST", "/events", self.body(key))


def _to_channel(key: str) -> dict[str, str]:
    return {"key": key, "channel": "C0123ABCD", "text": "Framing is done"}


def _person(key: str) -> str:
    return "U0RETRY" + key.split(":")[0].removeprefix("stage-")  # a person of its own


def _to_person(key: str) -> dict[str, str]:
    return {"key": key, "user": _person(key), "text": "Framing is done", "category": "updates"}


def test_a_duplicate_caller_between_a_retrys_read_and_its_claim_never_makes_it_lose(
    api, settings, db, clock, slack
):
    rounds = Rounds(api, db, clock, slack, _to_channel)
    rt = make_runtime(settings, db, clock, "worker-a")
    results: dict[str, list[Result]] = {}
    answers: dict[str, tuple[int, dict[str, object]]] = {}

    counts = orchestrate(
        lambda: rounds.retry(rt, results), lambda: rounds.duplicate(answers), name="reclaim"
    )

    assert counts == (2, 1) and len(rounds.keys) == 3
    posted = slack.delivery_ids()
    for key in rounds.keys:
        ref = _entry(db, key)
        assert results[key] == [Result.SENT], key
        assert answers[key][0] == 200 and answers[key][1]["duplicate"] is True, key
        assert posted.count(ref.id) == 1, key
        entry = ref.get()
        assert (entry.get("status"), entry.get("attempts")) == ("sent", 2), key
        event = db.collection(EVENTS).document(event_id(key)).get()
        assert (event.get("status"), event.get("callers")) == ("sent", 2), key


def test_a_duplicate_caller_between_a_retrys_read_and_its_gated_skip_never_makes_it_lose(
    api, settings, db, clock, slack
):
    seed_category(db, "updates")
    rounds = Rounds(
        api, db, clock, slack, _to_person, lambda key: opt_out(db, _person(key), "updates")
    )
    rt = make_runtime(settings, db, clock, "worker-a")
    results: dict[str, list[Result]] = {}
    answers: dict[str, tuple[int, dict[str, object]]] = {}

    counts = orchestrate(
        lambda: rounds.retry(rt, results),
        lambda: rounds.duplicate(answers),
        name="event_retry_skip",
    )

    assert counts == (2, 1) and len(rounds.keys) == 3
    assert slack.delivery_ids() == []
    for key in rounds.keys:
        assert results[key] == [Result.SKIPPED], key
        assert answers[key][0] == 200 and answers[key][1]["duplicate"] is True, key
        entry = _entry(db, key).get()
        assert (entry.get("status"), entry.get("reason")) == ("skipped", "opted_out"), key
        event = db.collection(EVENTS).document(event_id(key)).get()
        assert (event.get("status"), event.get("callers")) == ("skipped", 2), key


def test_two_passes_retrying_one_released_event_at_once_post_it_once(
    api, settings, db, clock, slack
):
    rounds = Rounds(api, db, clock, slack, _to_channel)
    workers = [make_runtime(settings, db, clock, f"worker-{w}") for w in "ab"]
    results: dict[str, list[Result]] = {}

    counts = orchestrate(
        lambda: rounds.retry(workers[0], results),
        lambda: rounds.retry(workers[1], results),
        name="reclaim",
    )

    assert counts[0] == 2 and len(rounds.keys) >= 2
    posted = slack.delivery_ids()
    for key in rounds.keys:
        ref = _entry(db, key)
        # The other found it claimed (DUPLICATE), or sending or sent when it read (SKIPPED).
        assert Result.SENT in results[key] and len(results[key]) == 2, key
        assert set(results[key]) - {Result.SENT} <= {Result.DUPLICATE, Result.SKIPPED}, key
        assert posted.count(ref.id) == 1, key
        assert (ref.get().get("status"), ref.get().get("attempts")) == ("sent", 2), key
    both_claimed = [key for key in rounds.keys if Result.DUPLICATE in results[key]]
    assert both_claimed  # an interleaving where both read it released, and both claimed


def test_a_retry_read_before_another_pass_retried_and_was_rate_limited_again_waits(
    api, settings, db, clock, slack
):
    """The entry alone decides: a pass that read the event released and due claims nothing
    once another pass has retried it meanwhile and been rate limited again; it is not due
    until that new `Retry-After` has passed, and then it is sent once."""
    rounds = Rounds(api, db, clock, slack, _to_channel)
    key = rounds.key()
    ref = db.collection(EVENTS).document(event_id(key))
    stale = ref.get()
    slack.inject(Fault("rate_limit", retry_after=30, times=1))
    other = make_runtime(settings, db, clock, "worker-b")
    assert deliver_one(other, EVENT_KIND, ref.get())[0] is Result.RELEASED

    rt = make_runtime(settings, db, clock, "worker-a")
    assert deliver_one(rt, EVENT_KIND, stale)[0] is Result.DUPLICATE
    assert slack.delivery_ids() == []
    clock.advance(timedelta(seconds=31))
    assert deliver_one(rt, EVENT_KIND, ref.get())[0] is Result.SENT
    assert slack.delivery_ids() == [_entry(db, key).id]


def test_a_retry_read_before_another_pass_failed_the_event_sends_nothing(
    api, settings, db, clock, slack, capsys
):
    """An event another pass ended `failed` (its category unreadable) has its entry failed
    in the same batch: a pass that read it released before, with the category mended since,
    claims nothing, and the person never gets an event already escalated as failed."""
    seed_category(db, "updates")
    rounds = Rounds(api, db, clock, slack, _to_person)
    key = rounds.key()
    ref = db.collection(EVENTS).document(event_id(key))
    stale = ref.get()
    db.collection("categories").document("updates").update({"quiet_window_hours": float("nan")})
    other = make_runtime(settings, db, clock, "worker-b")
    assert deliver_one(other, EVENT_KIND, ref.get())[0] is Result.FAILED
    seed_category(db, "updates")  # mended

    rt = make_runtime(settings, db, clock, "worker-a")
    assert deliver_one(rt, EVENT_KIND, stale)[0] is not Result.SENT
    assert slack.delivery_ids() == []
    entry = _entry(db, key).get().to_dict()
    assert (entry["status"], entry["error"]["code"]) == ("failed", "invalid_category")
    assert ref.get().get("status") == "failed"
