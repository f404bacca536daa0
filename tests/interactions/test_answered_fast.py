"""Slack's 3 seconds: a click is answered once its answer is recorded, never after a
chat.update; the post shows the answer off the request path, by the next pass (inline) or
by the click's own Pub/Sub message (DISPATCH=pubsub). When recording itself is slow, the
click is answered anyway, the delay logged, and the answer shown once it is recorded."""

from __future__ import annotations

import base64
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from emulator.slack_clicks import click_payload, form_body
from emulator.slack_standin import Fault
from interactions import in_time
from interactions.record import record_click
from tests.fixtures.clock import T0
from tests.fixtures.interactions import buttons, click, send
from tests.fixtures.pubsub import push
from tests.fixtures.tick import answer, at, bearer, tick

ALICE = "U0ALICE00"
SLOW_UPDATE = Fault(kind="slow", delay=3.5, method="chat.update")


def _context(slack: Any, ts: str) -> str:
    (post,) = [p for p in slack.posts() if p.ts == ts]
    return " ".join(e["text"] for b in post.blocks if b["type"] == "context" for e in b["elements"])


def _answers(db: Any) -> list[dict[str, Any]]:
    return [snap.to_dict() for snap in db.collection("responses").stream()]


def test_a_click_is_answered_without_calling_a_slow_chat_update_and_the_next_pass_shows_it(
    clicks, posted, slack, db, tick_app
):
    post = posted()
    slack.inject(SLOW_UPDATE)

    assert click(clicks, post, "done", ALICE, T0).status_code == 200

    assert slack.updates() == []  # Slack's update was not even called before the answer
    ((stored,),) = [_answers(db)]
    assert (stored["action_id"], stored["pending_update"]) == ("done", True)
    slack.clear_faults()
    counts = answer(tick(tick_app.test_client(), headers=bearer(), body=at(T0)), 200)
    assert counts["answers_shown"] == 1
    assert _context(slack, post.ts) == f"<@{ALICE}> answered *Done*"
    assert "pending_update" not in _answers(db)[0]


def test_under_pubsub_the_clicks_own_message_shows_the_answer(
    pubsub, deliver, clicks, posted, slack, db
):
    post = posted()
    slack.inject(SLOW_UPDATE)

    assert click(clicks, post, "done", ALICE, T0).status_code == 200

    assert slack.updates() == []
    (message,) = pubsub.pull()
    body = json.loads(base64.b64decode(message.push["message"]["data"]))
    assert (body["kind"], body["subject_id"]) == ("answers", post.delivery_id)
    slack.clear_faults()
    assert push(deliver, message) == 200
    assert _context(slack, post.ts) == f"<@{ALICE}> answered *Done*"
    assert "pending_update" not in _answers(db)[0]


def test_a_click_whose_recording_is_slow_is_answered_and_shown_once_recorded(
    clicks, posted, slack, db, tick_app, monkeypatch: pytest.MonkeyPatch, capsys
):
    """Firestore slower than the request may wait: the click is answered 200 (Slack shows the
    person no error), an ERROR line says the answer is unconfirmed, and the recording goes
    on; once it lands, the next pass shows it."""
    post = posted()
    release, recorded = threading.Event(), threading.Event()

    def slow_record(rt: Any, clicked: Any) -> Any:
        release.wait(timeout=5)  # Firestore taking its time
        try:
            return record_click(rt, clicked)
        finally:
            recorded.set()

    monkeypatch.setattr("interactions.message_click.record_click", slow_record)
    monkeypatch.setattr(in_time, "ANSWER_WITHIN_SECONDS", 0.2)
    capsys.readouterr()

    assert click(clicks, post, "done", ALICE, T0).status_code == 200

    assert not recorded.is_set() and _answers(db) == []
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    (late,) = [line for line in lines if line.get("status") == "unconfirmed"]
    assert late["severity"] == "ERROR"
    assert (late["delivery_id"], late["user"]) == (post.delivery_id, ALICE)
    release.set()
    assert recorded.wait(timeout=30)
    counts = answer(tick(tick_app.test_client(), headers=bearer(), body=at(T0)), 200)
    assert counts["answers_shown"] == 1
    assert _context(slack, post.ts) == f"<@{ALICE}> answered *Done*"


def test_a_forged_click_is_refused_even_while_recordings_are_slow(
    clicks, posted, slack, db, monkeypatch: pytest.MonkeyPatch
):
    """The signature is checked before the request waits on anything: with every worker of
    the request's work held by a slow Firestore, a click signed with another secret is
    still answered 401, never the 200 of a click whose work is late, and nothing is
    recorded for it."""
    post = posted()
    release = threading.Event()

    def slow_record(rt: Any, clicked: Any) -> Any:
        release.wait(timeout=5)  # Firestore taking its time
        return record_click(rt, clicked)

    monkeypatch.setattr("interactions.message_click.record_click", slow_record)
    monkeypatch.setattr(in_time, "ANSWER_WITHIN_SECONDS", 0.2)
    workers = ThreadPoolExecutor(max_workers=1)
    monkeypatch.setattr(in_time, "WORKERS", workers)
    assert click(clicks, post, "done", ALICE, T0).status_code == 200  # its work holds on
    forged = form_body(click_payload(buttons(post)["not-yet"], "U0MALLORY", post.channel, post.ts))

    answered = send(clicks, forged, T0, secret="not-the-signing-secret")

    release.set()
    workers.shutdown(wait=True)
    assert answered.status_code == 401
    assert [a["user"] for a in _answers(db)] == [ALICE]
