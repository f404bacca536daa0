"""Twenty callers report the same event at once (two tabs, a retried request, a second
portal...): exactly one post, one 201, nineteen `duplicate: true`, as threads sharing the
api target and as processes each running its own. Every caller is held just before its claim
until all twenty are there, so all of them race the ledger entry's `create()`. Duplicates
arriving while the first caller sends and records its outcome never fence it out."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

import events.notify as notify
import processor.finalize as finalize
from emulator.slack_standin import Fault
from tests.fixtures.api import call
from tests.fixtures.deliveries import ledger
from tests.fixtures.runtime import ROOT

CALLERS = 20
KEY = "stage-717:completed"
DELIVERY = "e:" + hashlib.sha256(KEY.encode()).hexdigest()
BODY = {"key": KEY, "channel": "C0123ABCD", "text": "Framing is done"}


def assert_one_send(answers, slack, db):
    assert Counter(status for status, _ in answers) == {201: 1, 200: CALLERS - 1}
    [first] = [answer for status, answer in answers if status == 201]
    assert first == {"delivery_id": DELIVERY, "duplicate": False, "status": "sent"}
    duplicates = [answer for status, answer in answers if status == 200]
    assert all(a["duplicate"] is True and a["delivery_id"] == DELIVERY for a in duplicates)
    # A duplicate answers the send's status as it was when it asked: sending, or sent.
    assert {a["status"] for a in duplicates} <= {"sending", "sent"}
    assert slack.delivery_ids() == [DELIVERY]
    assert ledger(db)[DELIVERY]["status"] == "sent"
    event = db.collection("events").document(DELIVERY[2:]).get().to_dict()
    assert (event["callers"], event["status"]) == (CALLERS, "sent")


def test_twenty_threads_with_one_key_post_once(api_app, api, db, slack, monkeypatch):
    barrier = threading.Barrier(CALLERS)
    real_claim = getattr(notify, "claim_new")  # noqa: B009 (rebound below)

    def held_claim(*args):
        barrier.wait()  # every caller has missed the event and is about to claim it
        return real_claim(*args)

    monkeypatch.setattr(notify, "claim_new", held_claim)

    def one_caller(_):
        return call(api_app.test_client(), "POST", "/events", BODY)

    with ThreadPoolExecutor(max_workers=CALLERS) as pool:
        answers = list(pool.map(one_caller, range(CALLERS)))

    assert_one_send(answers, slack, db)


@pytest.mark.slow
def test_twenty_processes_with_one_key_post_once(env, firestore_host, db, slack):
    worker_env = {**os.environ, **env, "FIRESTORE_EMULATOR_HOST": firestore_host}
    callers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.support.event_caller", json.dumps(BODY)],
            cwd=ROOT,
            env=worker_env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(CALLERS)
    ]
    try:
        for caller in callers:
            assert caller.stdout is not None and caller.stdout.readline() == "ready\n"
        for caller in callers:  # all twenty wait at their claim: let them race
            assert caller.stdin is not None
            caller.stdin.write("go\n")
            caller.stdin.flush()
        answers = []
        for caller in callers:
            out, _ = caller.communicate(timeout=120)
            # (The structured log lines come first; the answer is the last line.)
            status, body = out.strip().splitlines()[-1].split(" ", 1)
            answers.append((int(status), json.loads(body)))
    finally:
        for caller in callers:
            if caller.poll() is None:
                caller.kill()

    assert_one_send(answers, slack, db)


DUPLICATES = 15


def test_duplicates_during_a_slow_send_never_fence_out_the_first_caller(
    api_app, api, db, slack, monkeypatch
):
    """Fifteen callers with the key arrive while the first caller's post is slow (seven) and
    go on arriving while it records the outcome (one before each of its commits). They count
    themselves on the event, outside the send's fence: the first caller answers `sent`, and
    the ledger entry is `sent` at once rather than `claimed` until reconciliation."""
    slack.inject(Fault(kind="slow", delay=0.5, times=1))
    turns = threading.Semaphore(0)
    answered = threading.Semaphore(0)
    waiting = [DUPLICATES]

    def a_duplicate(_):
        turns.acquire()
        try:
            return call(api_app.test_client(), "POST", "/events", BODY)
        finally:
            answered.release()

    def let_in(count):
        """`count` more duplicates arrive, and are answered, before the first caller goes on."""
        count = min(count, waiting[0])
        waiting[0] -= count
        for _ in range(count):
            turns.release()
        for _ in range(count):
            assert answered.acquire(timeout=60)

    real_send = getattr(notify, "send")  # noqa: B009 (rebound below)
    real_commit = finalize._commit

    def slow_send(rt, claim):
        turns.release(7)  # they arrive while the post is on its way
        waiting[0] -= 7
        post = real_send(rt, claim)
        for _ in range(7):
            assert answered.acquire(timeout=60)
        return post

    def a_duplicate_then_commit(rt, records):
        let_in(1)
        real_commit(rt, records)

    monkeypatch.setattr(notify, "send", slow_send)
    monkeypatch.setattr(finalize, "_commit", a_duplicate_then_commit)
    with ThreadPoolExecutor(max_workers=DUPLICATES) as pool:
        duplicates = pool.map(a_duplicate, range(DUPLICATES))
        first = call(api, "POST", "/events", BODY)
        let_in(DUPLICATES)
        answers = list(duplicates)

    assert first == (201, {"delivery_id": DELIVERY, "duplicate": False, "status": "sent"})
    assert ledger(db)[DELIVERY]["status"] == "sent"
    assert all(status == 200 and a["duplicate"] is True for status, a in answers)
    event = db.collection("events").document(DELIVERY[2:]).get().to_dict()
    assert (event["callers"], event["status"]) == (DUPLICATES + 1, "sent")
    assert slack.delivery_ids() == [DELIVERY]
