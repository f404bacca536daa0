"""A caller that dies after its claim leaves a lease, and reconciliation settles it as for any
send (events.kind): a post found in the channel's history is the event sent, never posted
twice; a post absent from it is released and sent by a later pass, once. Meanwhile and after,
every caller with the key is a duplicate that sends nothing."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from datetime import timedelta

import pytest

from processor.reconcile import backoff
from targets.kinds import run_pass
from tests.fixtures.api import call
from tests.fixtures.deliveries import ledger
from tests.fixtures.runtime import ROOT

KEY = "stage-717:completed"
SHA = hashlib.sha256(KEY.encode()).hexdigest()
DELIVERY = f"e:{SHA}"
PERSON = "U0PERSON1"


def crash(point, body, env, firestore_host, clock):
    worker_env = {**os.environ, **env, "FIRESTORE_EMULATOR_HOST": firestore_host}
    worker = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.support.crash_event",
            point,
            json.dumps(body),
            clock.now().isoformat(),
        ],
        cwd=ROOT,
        env=worker_env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert worker.returncode == -signal.SIGKILL, worker.stderr[-2000:]


@pytest.mark.parametrize("point", ["after_claim", "after_post"])
@pytest.mark.parametrize("to", ["channel", "user"])
def test_a_caller_that_dies_leaves_a_lease_settled_once(
    api, rt, db, slack, env, firestore_host, clock, point, to
):
    recipient = {"channel": "C0123ABCD"} if to == "channel" else {"user": PERSON}
    body = {"key": KEY, "text": "Framing is done", **recipient}
    crash(point, body, env, firestore_host, clock)

    entry = ledger(db)[DELIVERY]
    assert (entry["status"], entry["kind"], entry["event_id"]) == ("claimed", "event", SHA)
    where = "C0123ABCD" if to == "channel" else slack.dm_channel(PERSON)
    assert entry["channel"] == where  # where reconciliation reads the history
    assert len(slack.posts()) == (point == "after_post")
    status, meanwhile = call(api, "POST", "/events", body)
    assert (status, meanwhile["duplicate"], meanwhile["status"]) == (200, True, "sending")

    clock.advance(timedelta(seconds=301))  # past the dead caller's lease
    run_pass(rt)
    clock.advance(backoff(1))  # past a release's backoff
    run_pass(rt)

    assert slack.delivery_ids() == [DELIVERY]
    [post] = slack.posts()
    assert post.channel == where
    entry = ledger(db)[DELIVERY]
    assert (entry["status"], entry["slack_ts"]) == ("sent", post.ts)
    assert entry["attempts"] == (2 if point == "after_claim" else 1)
    event = db.collection("events").document(SHA).get().to_dict()
    assert (event["status"], event["slack_ts"], event["callers"]) == ("sent", post.ts, 2)
    status, later = call(api, "POST", "/events", body)
    assert (status, later) == (200, {"delivery_id": DELIVERY, "duplicate": True, "status": "sent"})
    assert len(slack.posts()) == 1
