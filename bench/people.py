"""The people section of the benchmark (issue 21 point 7): messages to people through their
gates, beside the same messages without categories (no gates), on the same emulator.

A gated run, in a project of its own:
1. the three categories (bench.people_data: `nudge` with a 4-hour quiet window, `digest`
   capped at one a day, `reminder` exempt and must-read), as an operator writes them;
2. every fifth person opts out of nudges through `PUT /preferences/{user}`
   (bench.people_api);
3. an earlier round sends one digest to every tenth person (one worker, until idle), so
   their cap for the day is reached as the claims and finalizes left it;
4. each person's 3 or 4 messages (a nudge, a digest, a reminder; every other person a
   second nudge), all due at one instant, drained by `workers` worker processes running the
   product's pass until idle (bench.contenders.run_people).
A plain run seeds the same people's messages without a category, and drains them alike.

Each run reports drain time, deliveries per second, sent and skipped by reason beside what
the gates should come to, duplicates and lost (bench.people_checks.outcomes), the gates'
invariants, Firestore RPCs and billing units per delivery, and the documents read from the
gates' collections per person per pass (each pass's distinct people, counted by the worker
from the due documents it read)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from google.cloud import firestore

from bench import metrics, people_checks
from bench.people_data import (
    CATEGORY_FIELDS,
    DIGEST,
    PersonMessage,
    earlier_digests,
    messages_for,
    opted_out,
    seed,
    seed_categories,
    user_of,
)
from bench.runs import Bench, new_project, run_workers
from bench.services import ROOT
from core.store import CATEGORIES, DELIVERIES, PEOPLE, PREFERENCES

# The collections the gates read, in the order of read_gates.
GATE_COLLECTIONS = (CATEGORIES, PREFERENCES, PEOPLE)
# The target: the gates cost at most this many extra documents read per person per
# pass (reported, never asserted).
TARGET_GATE_READS = 1.0
_TOKEN = "bench-admin-token"  # noqa: S105 (the local run's own, as bench.runs sets it)


def people_runs(
    bench: Bench, *, people: int, workers: list[int], cap_seconds: float
) -> dict[str, Any]:
    """For each worker count, a gated run and a plain run, in turns; each run reported."""
    runs: dict[str, Any] = {}
    for n in workers:
        print(f"bench: {people} people through their gates, {n} worker(s)...", flush=True)
        runs[f"people_gates_{n}"] = gated_run(bench, people, n, cap_seconds)
        print(f"bench: the same people's messages without gates, {n} worker(s)...", flush=True)
        runs[f"people_plain_{n}"] = plain_run(bench, people, n, cap_seconds)
    return runs


def gated_run(bench: Bench, people: int, workers: int, cap_seconds: float) -> dict[str, Any]:
    project = new_project("people-gates")
    db = firestore.Client(project=project)
    seed_categories(db)
    opted = {user_of(n): opted_out(n) for n in range(people) if opted_out(n)}
    _put_preferences(bench, project, opted)
    due = datetime.now(UTC).replace(microsecond=0)
    # The earlier round: the digests that fill the capped people's daily cap.
    early = earlier_digests(people, "early-", due)
    seed(db, early)
    bench.standin.reset()
    before = run_workers(bench, project, _shape(1, cap_seconds), ROOT)
    early_ids = {row.delivery_id: row for row in early}
    earlier: Counter[tuple[str, str]] = Counter()
    for post in bench.standin.posts():
        if (row := early_ids.get(metrics.delivery_id(post))) is not None:
            earlier[(row.user, DIGEST)] += 1
    rows = messages_for(people, "p-", due)
    result = _drain(bench, db, project, rows, workers, cap_seconds)
    posts = result.pop("_posts")
    categories = {c: dict(f) for c, f in CATEGORY_FIELDS.items()}
    result["earlier_round"] = {
        "digests": len(early),
        "sent": sum(earlier.values()),
        "errors": before.errors,
    }
    result["expected_skipped_by_reason"] = people_checks.expected_reasons(
        rows, categories, opted, earlier
    )
    result["invariants"] = people_checks.invariants(rows, posts, categories, opted, earlier)
    result["opted_out_people"] = len(opted)
    return result


def plain_run(bench: Bench, people: int, workers: int, cap_seconds: float) -> dict[str, Any]:
    project = new_project("people-plain")
    db = firestore.Client(project=project)
    due = datetime.now(UTC).replace(microsecond=0)
    rows = messages_for(people, "p-", due, gated=False)
    result = _drain(bench, db, project, rows, workers, cap_seconds)
    result.pop("_posts")
    return result


def _shape(workers: int, cap_seconds: float) -> dict[str, Any]:
    return {"mode": "people", "workers": workers, "cap_seconds": cap_seconds}


def _drain(
    bench: Bench,
    db: firestore.Client,
    project: str,
    rows: list[PersonMessage],
    workers: int,
    cap_seconds: float,
) -> dict[str, Any]:
    """Seed `rows`, drain them with `workers` processes, and measure: the run's figures,
    with the stand-in's posts under `_posts` for the caller's checks."""
    seed(db, rows)
    bench.standin.reset()
    load_before = os.getloadavg()
    run = run_workers(bench, project, _shape(workers, cap_seconds), ROOT)
    posts = bench.standin.posts()
    refs = [db.collection(DELIVERIES).document(row.delivery_id) for row in rows]
    entries = {snap.id: snap.to_dict() or {} for snap in db.get_all(refs)}
    settled = people_checks.outcomes(rows, entries, posts)
    measured = metrics.workers(run.results, run.go, settled["sent"])
    measured["cpu_seconds"] |= run.service_cpu
    gates = _gate_reads(run.results)
    return {
        "people": len({row.user for row in rows}),
        "workers": workers,
        **settled,
        "deliveries_per_s": measured.pop("messages_per_s"),
        "occurrences_per_s": (
            round(len(rows) / measured["drain_s"], 1) if measured["drain_s"] > 0 else None
        ),
        **_lags(rows, posts, run.go),
        **measured,
        # The same costs per occurrence: a gated run sends fewer of its occurrences.
        "rpcs_per_occurrence": round(sum(measured["rpcs"].values()) / len(rows), 2),
        "billing_per_occurrence": {
            unit: round(n / len(rows), 2) for unit, n in measured["billing"].items()
        },
        **gates,
        "gate_reads_per_occurrence": round(sum(gates["gate_reads"].values()) / len(rows), 3),
        "worker_errors": run.errors,
        "load_average": [[round(x, 2) for x in load] for load in (load_before, os.getloadavg())],
        "_posts": posts,
    }


def _lags(rows: list[PersonMessage], posts: list[dict[str, Any]], go: float) -> dict[str, Any]:
    due = {row.delivery_id: row.due.timestamp() for row in rows}
    lags = [
        p["received_at"] - max(due[i], go) for p in posts if (i := metrics.delivery_id(p)) in due
    ]
    return {
        "lag_p50_s": _round(metrics.percentile(lags, 50)),
        "lag_p99_s": _round(metrics.percentile(lags, 99)),
    }


def _gate_reads(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Documents read from the gates' collections, in all and per person per pass (a pass's
    person: one with a due message in the pages it read), and the documents written."""
    reads: Counter[str] = Counter()
    writes: Counter[str] = Counter()
    person_passes = 0
    for result in results:
        reads.update(result["rpcs"].get("reads_by_collection", {}))
        writes.update(result["rpcs"].get("writes_by_collection", {}))
        person_passes += result["totals"].get("person_passes", 0)
    gate = {c: reads[c] for c in GATE_COLLECTIONS}
    per = {c: round(n / person_passes, 3) if person_passes else None for c, n in gate.items()}
    return {
        "reads_by_collection": dict(reads),
        "writes_by_collection": dict(writes),
        "person_passes": person_passes,
        "gate_reads": gate,
        "gate_reads_per_person_pass": per,
        "gate_reads_per_person_pass_total": (
            round(sum(gate.values()) / person_passes, 3) if person_passes else None
        ),
    }


def warm_up(bench: Bench, *, people: int, cap_seconds: float) -> None:
    """An unreported gated round and plain round of a quarter of the size, one worker: the
    emulator's JIT compiles the paths both use (the gates' batched gets, people's documents)
    before the reported runs, not during the first of them."""
    size = max(people // 4, 10)
    gated_run(bench, size, 1, cap_seconds)
    plain_run(bench, size, 1, cap_seconds)


def _put_preferences(bench: Bench, project: str, opted: dict[str, list[str]]) -> None:
    env = {**os.environ, **bench.env(project), "ADMIN_TOKEN": _TOKEN}
    config = json.dumps({"token": _TOKEN, "opted_out": opted})
    done = subprocess.run(
        [sys.executable, "-m", "bench.people_api", config],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,  # the API's log lines
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"writing the preferences failed: {done.stderr[-2000:]}")


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
