"""Twenty callers report the same event at once (two tabs, a retried request, a second
portal...): exactly one post, one 201, nineteen `duplicate: true`, as threads sharing the
api target and as processes each running its own. Every caller is held just before its claim
until all twenty are there, so all of them race the ledger entry's `create()`."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import events.notify as notify
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
