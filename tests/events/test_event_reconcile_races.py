"""Reconciliation takes an event's expired lease over under its ledger entry alone: a
duplicate `POST /events` landing between the reconciler's read of the event and its
take-over never makes the take-over lose, and a reconciler whose read is older than another
one's take-over leaves the lease it finds live (on the entry) alone."""

from __future__ import annotations

import hashlib
import itertools
from datetime import timedelta

from core.models import event_id
from core.store import DELIVERIES, EVENTS
from emulator.slack_standin import Fault
from events.kind import EVENT_KIND
from processor import history_search
from processor.history_search import HistoryBudget
from processor.outcome import Result
from processor.reconcile import reconcile_one
from tests.fixtures.api import call
from tests.fixtures.logs import error_lines
from tests.fixtures.runtime import make_runtime
from tests.fixtures.slack import HISTORY
from tests.support.interleave import orchestrate


def _body(key: str) -> dict[str, str]:
    return {"key": key, "channel": "C0123ABCD", "text": "Framing is done"}


class Rounds:
    """Events whose answer Slack lost (posted; the caller's lease stays), their leases
    expired: seeded before the race (the first caller's own finalize passes a `lease`
    SYNCPOINT), one for each interleaving, which both threads find in turn."""

    def __init__(self, api, clock, slack, count: int = 8):
        self.arrivals = itertools.count()
        self.keys = [f"stage-{n}:done" for n in range(count)]
        for key in self.keys:
            slack.inject(Fault("drop_after_receipt", times=1))
            assert call(api, "POST", "/events", _body(key))[1]["status"] == "sending"
        clock.advance(timedelta(seconds=301))  # past the callers' leases
        self.used: list[str] = []

    def key(self) -> str:
        key = self.keys[next(self.arrivals) // 2]
        if key not in self.used:
            self.used.append(key)
        return key


def _reconcile(db, rt, rounds: Rounds, results: dict[str, list[Result | None]]) -> None:
    """A pass's reconciliation of this round's event: its read, then its take-over."""
    key = rounds.key()
    snap = db.collection(EVENTS).document(event_id(key)).get()
    # Settled already: no pass would find its lease. (Paused here, after the read.)
    if snap.get("status") != "sending":  # pragma: SYNCPOINT lease
        results.setdefault(key, []).append(None)
        return
    result = reconcile_one(rt, EVENT_KIND, snap, HistoryBudget.for_pass(rt))
    results.setdefault(key, []).append(result)


def _entry(db, key):
    ledger_id = "e:" + hashlib.sha256(key.encode()).hexdigest()
    return db.collection(DELIVERIES).document(ledger_id).get()


def test_a_duplicate_caller_between_a_reconcilers_read_and_its_take_over_never_makes_it_lose(
    api, settings, db, clock, slack
):
    rounds = Rounds(api, clock, slack)
    rt = make_runtime(settings, db, clock, "reconciler-a")
    results: dict[str, list[Result | None]] = {}
    answers: dict[str, tuple[int, dict[str, object]]] = {}

    def duplicate() -> None:
        key = rounds.key()
        answers[key] = call(api, "POST", "/events", _body(key))

    counts = orchestrate(lambda: _reconcile(db, rt, rounds, results), duplicate, name="lease")

    assert counts[1] == 1 and len(rounds.used) == counts[0] + 1  # each point, and first
    posted = slack.delivery_ids()
    for key in rounds.used:
        entry = _entry(db, key)
        assert results[key] == [Result.SENT], key  # found in the history: sent, at once
        assert answers[key][0] == 200 and answers[key][1]["duplicate"] is True, key
        assert posted.count(entry.id) == 1 and entry.get("status") == "sent", key
        event = db.collection(EVENTS).document(event_id(key)).get()
        assert (event.get("status"), event.get("callers")) == ("sent", 2), key


def test_a_reconciler_that_read_a_lease_expired_leaves_it_to_the_one_that_took_it_over(
    api, settings, db, clock, slack, capsys, monkeypatch
):
    """Reconciler B read the event's lease expired; before B reads its ledger entry,
    reconciler A takes it over and is reading Slack's history. B finds the entry's lease
    live and leaves it alone: A settles it, nothing is fenced, nothing posted twice."""
    [key] = Rounds(api, clock, slack, count=1).keys
    ref = db.collection(EVENTS).document(event_id(key))
    stale = ref.get()  # B's read
    a, b = (make_runtime(settings, db, clock, f"reconciler-{r}") for r in "ab")
    b_results: list[Result | None] = []
    real_ask = history_search.ask_history

    def ask_while_b_reconciles(*args, **kwargs):  # A has taken the lease over
        if not b_results:  # (B's own ask, if B took it over, goes straight to Slack)
            b_results.append(None)
            b_results[0] = reconcile_one(b, EVENT_KIND, stale, HistoryBudget.for_pass(b))
        return real_ask(*args, **kwargs)

    monkeypatch.setattr("processor.reconcile.ask_history", ask_while_b_reconciles)
    a_result = reconcile_one(a, EVENT_KIND, ref.get(), HistoryBudget.for_pass(a))

    assert (a_result, b_results) == (Result.SENT, [Result.DUPLICATE])
    assert _entry(db, key).get("status") == "sent"
    assert slack.delivery_ids() == [_entry(db, key).id]
    assert not error_lines(capsys.readouterr().out, status="fenced")


def test_a_duplicate_caller_while_a_reconciler_reads_history_keeps_its_search(
    api, settings, db, clock, slack, monkeypatch
):
    """History is rate limited (`Retry-After` 30) while a duplicate caller counts itself on
    the event: the reconciler still keeps its search and lets the lease expire when Slack can
    be asked again, and settles the event then."""
    [key] = Rounds(api, clock, slack, count=1).keys
    ref = db.collection(EVENTS).document(event_id(key))
    slack.inject(Fault(kind="rate_limit", method=HISTORY, times=1, retry_after=30))
    real_read = history_search.read_window

    def read_while_a_duplicate_arrives(*args, **kwargs):
        assert call(api, "POST", "/events", _body(key))[1]["duplicate"] is True
        return real_read(*args, **kwargs)

    monkeypatch.setattr(history_search, "read_window", read_while_a_duplicate_arrives)
    rt = make_runtime(settings, db, clock, "reconciler-a")
    assert reconcile_one(rt, EVENT_KIND, ref.get(), HistoryBudget.for_pass(rt)) is None

    resume_at = clock.now() + timedelta(seconds=30)
    event, entry = ref.get(), _entry(db, key)
    assert (event.get("lease")["expires_at"], event.get("callers")) == (resume_at, 2)
    assert entry.get("lease_expires_at") == resume_at and entry.get("search") is not None
    monkeypatch.undo()
    clock.advance(timedelta(seconds=30))
    assert reconcile_one(rt, EVENT_KIND, ref.get(), HistoryBudget.for_pass(rt)) is Result.SENT
    assert slack.delivery_ids() == [entry.id]
