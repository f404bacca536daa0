"""Many workers, one set of due messages: every message is delivered exactly once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from core.models import message_delivery_id
from core.store import MESSAGES
from tests.fixtures.deliveries import ledger
from tests.fixtures.runtime import ROOT

WORKERS = 8
MESSAGES_DUE = 300


@pytest.mark.slow
def test_eight_worker_processes_deliver_300_messages_exactly_once(env, db, slack, firestore_host):
    # Worker processes run on the wall clock, so the messages are due by it.
    due_at = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=1)
    ids = [f"msg-{n:03d}" for n in range(MESSAGES_DUE)]
    batch = db.batch()
    for n, mid in enumerate(ids):
        batch.set(
            db.collection(MESSAGES).document(mid),
            {
                "channel": f"C{n % 30:04d}AB",
                "text": f"message {n}",
                "status": "pending",
                "send_at": due_at,
                "next_run_at": due_at,
                "version": 1,
            },
        )
    batch.commit()

    worker_env = {**os.environ, **env, "FIRESTORE_EMULATOR_HOST": firestore_host}
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "targets.worker", "--until-idle"],
            cwd=ROOT,
            env=worker_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(WORKERS)
    ]
    sent_by_workers = 0
    for worker in workers:
        out, err = worker.communicate(timeout=240)
        assert worker.returncode == 0, err[-2000:]
        ticks = [json.loads(line)["tick"] for line in out.splitlines() if '"tick"' in line]
        sent_by_workers += sum(t["sent"] for t in ticks)

    per_delivery = Counter(slack.delivery_ids())
    expected = {message_delivery_id(mid, due_at) for mid in ids}
    assert set(per_delivery) == expected  # nothing lost, nothing unknown
    assert max(per_delivery.values()) == 1  # nothing twice
    assert sent_by_workers == MESSAGES_DUE
    statuses = Counter(d.to_dict()["status"] for d in db.collection(MESSAGES).stream())
    assert statuses == {"sent": MESSAGES_DUE}
    entries = ledger(db)
    assert len(entries) == MESSAGES_DUE
    assert {e["status"] for e in entries.values()} == {"sent"}
