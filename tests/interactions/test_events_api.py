"""The Events API through the `interactions` target: each event acted on once whatever Slack
retries, the app's uninstall holding every Slack post (due occurrences end `failed`
`app_uninstalled`, one ERROR line each) until a pass sees it installed again, and a forged or
stale event refused with nothing stored."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest

from core.store import SLACK_EVENTS, SLACK_INSTALLATION
from emulator.slack_clicks import signed_headers
from emulator.slack_standin import Fault
from interactions.dispatch import take_inbound
from interactions.inbound import classify
from targets.kinds import run_pass
from tests.fixtures.clock import T0
from tests.fixtures.events_api import TEAM, UNINSTALL, event_body
from tests.fixtures.interactions import SECRET
from tests.fixtures.logs import error_lines
from tests.fixtures.messages import message, seed_message, seed_series
from tests.support.interleave import Rounds, orchestrate

UNINSTALLED = "Slack app uninstalled: nothing is posted to Slack until it is installed again"


def deliver(client: Any, body: bytes, at: datetime, retry: int = 0, secret: str = SECRET) -> Any:
    """One delivery of `body`, signed at `at`; `retry`: Slack's retry number (its headers)."""
    headers = signed_headers(secret, body, int(at.timestamp()))
    if retry:
        headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
    return client.post("/", data=body, headers=headers)


def lines(out: str, message: str) -> list[dict[str, Any]]:
    parsed = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return [line for line in parsed if line["message"] == message]


def installation(db: Any) -> dict[str, Any]:
    return db.collection(SLACK_INSTALLATION).document(TEAM).get().to_dict() or {}


def revoked_token(slack: Any) -> None:
    """The workspace took the app's token back: auth.test refuses it until a reinstall."""
    slack.inject(Fault(kind="error", method="auth.test", code="token_revoked"))


def test_an_uninstall_posts_nothing_and_ends_due_occurrences_failed(clicks, rt, db, slack):
    first, second = seed_series(db), seed_series(db, channel="C0456EFGH")
    revoked_token(slack)

    assert deliver(clicks, event_body(UNINSTALL), T0).status_code == 200
    run_pass(rt)

    assert slack.posts() == [] and slack.calls("chat.postMessage") == 0
    for mid in (first, second):
        assert message(db, mid)["last_error"]["code"] == "app_uninstalled"
    assert installation(db)["status"] == "uninstalled"
    assert installation(db)["event_id"] == "Ev0PV52K21"


def test_each_failed_occurrence_is_one_error_line(clicks, rt, db, slack, clock, capsys):
    first, second = seed_series(db), seed_series(db, channel="C0456EFGH")
    revoked_token(slack)
    deliver(clicks, event_body(UNINSTALL), T0)

    run_pass(rt)

    out = capsys.readouterr().out
    for mid in (first, second):
        (line,) = error_lines(out, message_id=mid)
        assert (line["status"], line["error_code"]) == ("failed", "app_uninstalled")


def test_a_reinstall_seen_by_a_pass_resumes_posting(clicks, rt, db, slack, clock, capsys):
    failed = seed_series(db)
    revoked_token(slack)
    deliver(clicks, event_body(UNINSTALL), T0)
    run_pass(rt)
    slack.clear_faults()  # installed again: the token works
    clock.advance(timedelta(hours=1))
    later = seed_message(db, send_at=clock.now(), next_run_at=clock.now(), text="After")

    run_pass(rt)

    (post,) = slack.posts()
    assert post.text == "After"
    assert message(db, later)["status"] == "sent"
    assert message(db, failed)["status"] == "failed"  # a person's Retry sends it
    assert installation(db)["status"] == "installed"
    out = capsys.readouterr().out
    (resumed,) = lines(out, "Slack app installed again: posting to Slack resumes")
    assert resumed["team_id"] == TEAM


def test_a_retried_event_is_acted_on_once(clicks, db, clock, capsys):
    body = event_body(UNINSTALL)

    first = deliver(clicks, body, T0)
    retried = deliver(clicks, body, T0 + timedelta(seconds=4), retry=1)

    assert (first.status_code, retried.status_code) == (200, 200)
    out = capsys.readouterr().out
    assert len(lines(out, UNINSTALLED)) == 1
    (ignored,) = lines(out, "event ignored")
    assert (ignored["reason"], ignored["event_id"]) == ("duplicate", "Ev0PV52K21")
    assert db.collection(SLACK_EVENTS).document("Ev0PV52K21").get().exists


def test_two_deliveries_of_one_event_at_once_act_once(rt, db, capsys):
    """Every interleaving of two deliveries of one event (orchestrate): one acts."""
    rounds = Rounds(lambda: f"EvRACE{len(rounds.messages)}")

    def delivery() -> None:
        event_id = rounds.message_for_this_round()
        take_inbound(rt, classify(event_body(UNINSTALL, event_id)))

    orchestrate(delivery, delivery, name="event_taken")

    assert len(rounds.messages) > 1  # orchestrate ran several interleavings
    acted = lines(capsys.readouterr().out, UNINSTALLED)
    assert sorted(line["event_id"] for line in acted) == sorted(rounds.messages)


@pytest.mark.parametrize(
    ("tokens", "uninstalled"),
    [({"oauth": ["U0ANA1234"], "bot": ["UBOT"]}, True), ({"oauth": ["U0ANA1234"]}, False)],
)
def test_tokens_revoked_uninstalls_only_for_a_bot_token(clicks, db, tokens, uninstalled):
    body = event_body({"type": "tokens_revoked", "tokens": tokens})

    assert deliver(clicks, body, T0).status_code == 200

    assert (installation(db).get("status") == "uninstalled") is uninstalled


@pytest.mark.parametrize(
    ("signed_at", "secret"),
    [(T0, "not-the-secret"), (T0 - timedelta(minutes=10), SECRET)],
    ids=["forged", "stale"],
)
def test_a_forged_or_stale_event_is_refused_and_nothing_stored(
    clicks, db, slack, signed_at, secret
):
    seed_series(db)

    answer = deliver(clicks, event_body(UNINSTALL), signed_at, secret=secret)

    assert answer.status_code == 401
    assert list(db.collection(SLACK_EVENTS).stream()) == []
    assert installation(db) == {}


def test_an_event_whose_handler_failed_is_acted_on_by_slacks_retry(rt, db, monkeypatch, capsys):
    """The first delivery's work raises (Firestore refused the write, say): answered 500,
    its record removed, so Slack's retry acts on the event. (Through interactions.dispatch:
    the target's 2 s bound is test_answered_fast's.)"""
    from interactions.events_api import EVENTS

    act = EVENTS["app_uninstalled"]
    tries: list[int] = []

    def fails_once(rt: Any, body: dict[str, Any]) -> None:
        tries.append(1)
        if len(tries) == 1:
            raise RuntimeError("the write failed")
        act(rt, body)

    monkeypatch.setitem(EVENTS, "app_uninstalled", fails_once)
    inbound = classify(event_body(UNINSTALL))

    failed = take_inbound(rt, inbound)
    retried = take_inbound(rt, inbound)

    assert (failed.status_code, retried.status_code) == (500, 200)
    assert json.loads(failed.get_data())["error"] == "internal"
    assert installation(db)["status"] == "uninstalled"
    assert len(lines(capsys.readouterr().out, UNINSTALLED)) == 1
