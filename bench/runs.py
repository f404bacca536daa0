"""The runs: each on a fresh Firestore project of the one emulator, with the stand-in's
record reset, so no run sees another's data or posts."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from google.cloud import firestore

from bench import cpu, metrics, seeding
from bench.rpc import CountedClient, RpcCounter
from bench.services import ROOT, StandInProcess
from bench.teams import TeamsBench
from core.clock import SystemClock
from core.documents.deliveries import LedgerField
from core.documents.messages import MessageField
from core.platform import SLACK, TEAMS
from core.runtime import Runtime, new_worker_id
from core.settings import Settings
from core.slack import SlackTransport
from core.store import DELIVERIES, MESSAGES, read_in_order
from emulator.firestore import FirestoreEmulator
from emulator.pubsub import EMULATOR_HOST_ENV, PubSubEmulator, create_subscription, create_topic
from messages.kind import MESSAGE_KIND
from processor.kind_pass import PARALLEL_POSTS, run_kind

# A worker that has not finished this long after its cap is killed (it is ours to stop).
_GRACE = 60.0
# Who claimed a post, and when: read from its ledger entry for close pairs (_add_claims).
_CLAIM_FIELDS = (LedgerField.WORKER, LedgerField.CLAIMED_AT, LedgerField.SENT_AT)


@dataclass(frozen=True)
class Bench:
    firestore_host: str
    emulator_pgid: int
    standin: StandInProcess
    threads: int  # per floor worker: the same as ours posts in parallel within a pass
    pubsub: PubSubEmulator | None = None  # for the Pub/Sub mode only
    teams: TeamsBench | None = None  # for the Teams runs only

    def env(self, project: str, platform: str = SLACK) -> dict[str, str]:
        env = {
            "GOOGLE_CLOUD_PROJECT": project,
            "FIRESTORE_EMULATOR_HOST": self.firestore_host,
            "SLACK_API_URL": self.standin.url,
            "SLACK_BOT_TOKEN": "xoxb-bench",
            "APP_ENV": "development",
        }
        if self.pubsub is not None:
            env[EMULATOR_HOST_ENV] = self.pubsub.host_port
        if platform == TEAMS:
            env |= self.teams_side().env()
        return env

    def teams_side(self) -> TeamsBench:
        if self.teams is None:
            raise RuntimeError("a Teams run needs the bench started with teams=True")
        return self.teams

    def standin_pid(self, platform: str) -> int:
        return self.teams_side().pid if platform == TEAMS else self.standin.pid

    def posts(self, platform: str) -> list[dict[str, Any]]:
        """What the platform's stand-in recorded, as Slack posts (bench.teams)."""
        return self.teams_side().posts() if platform == TEAMS else self.standin.posts()


@contextlib.contextmanager
def started(latency_ms: float, *, pubsub: bool = False, teams: bool = False) -> Iterator[Bench]:
    """A Firestore emulator and a Slack stand-in answering after `latency_ms` (and, with
    `pubsub`, the Pub/Sub emulator; with `teams`, the Teams stand-in answering sends after
    the same latency), for the length of a benchmark; workers post with PARALLEL_POSTS
    threads (the floor too)."""
    with contextlib.ExitStack() as stack:
        emulator = FirestoreEmulator()
        emulator.start()
        stack.callback(emulator.stop)
        os.environ["FIRESTORE_EMULATOR_HOST"] = emulator.host_port
        pubsub_emulator = None
        if pubsub:
            pubsub_emulator = PubSubEmulator()
            pubsub_emulator.start()
            stack.callback(pubsub_emulator.stop)
            os.environ[EMULATOR_HOST_ENV] = pubsub_emulator.host_port
        standin = StandInProcess(latency_ms)
        stack.callback(standin.stop)
        teams_bench = None
        if teams:
            teams_bench = TeamsBench(latency_ms)
            stack.callback(teams_bench.stop)
        assert emulator.pid is not None  # started above
        yield Bench(
            emulator.host_port,
            emulator.pid,
            standin,
            PARALLEL_POSTS,
            pubsub_emulator,
            teams_bench,
        )


def new_project(label: str) -> str:
    return f"bench-{label}-{uuid.uuid4().hex[:8]}"


def contend(
    bench: Bench,
    mode: str,
    *,
    count: int,
    channels: int,
    workers: int,
    cap_seconds: float,
    label: str | None = None,
    source: Path = ROOT,
    platform: str = SLACK,
    tick_every: float | None = None,
) -> dict[str, Any]:
    """Seed `count` due one-offs over `channels` (Slack channels, or Teams conversations
    with `platform` TEAMS), run `workers` processes of `mode` from one start signal, and
    measure what reached the stand-in. The workers run the code under `source` (another
    revision's tree, for bench.compare). Under PUBSUB_MODE with `tick_every`, the tick runs
    a pass every `tick_every` seconds until the run ends (a backlog over several ticks)
    instead of one."""
    project = new_project(label or mode)
    db = firestore.Client(project=project)
    due = datetime.now(UTC).replace(microsecond=0)
    prefix = f"{mode}-"
    seeded = seeding.seed(db, prefix, count, channels, due, platform=platform)
    bench.standin.reset()
    if platform == TEAMS:
        bench.teams_side().reset()
        bench.teams_side().install(db, sorted({s.channel for s in seeded}), due)
    load_before = os.getloadavg()
    shape = {"mode": mode, "workers": workers, "count": count, "channels": channels}
    shape |= {"prefix": prefix, "due": due.isoformat(), "threads": bench.threads}
    shape |= {"cap_seconds": cap_seconds, "platform": platform, "tick_every": tick_every}
    if mode == PUBSUB_MODE:
        run = _run_pubsub(bench, project, shape, source, len(seeded))
    else:
        run = run_workers(bench, project, shape, source)
    posts = bench.posts(platform)
    delivered = metrics.deliveries(seeded, posts, run.go)
    measured = metrics.workers(run.results, run.go, delivered["delivered"])
    measured["cpu_seconds"] |= run.service_cpu
    if measured["capped"]:
        # Stopped at its cap: what was not sent yet was not lost, only not reached.
        delivered["not_reached_at_cap"] = delivered["lost"]
        delivered["lost"] = None
    pacing = metrics.pacing(posts)
    _add_claims(db, pacing["close_pairs"])
    statuses = Counter(
        (d.to_dict() or {}).get(MessageField.STATUS) for d in list(db.collection(MESSAGES).stream())
    )
    return {
        "mode": mode,
        "messages": count,
        "channels": channels,
        "workers": workers,
        **delivered,
        **measured,
        "pacing": pacing,
        "final_statuses": dict(statuses),
        "worker_errors": run.errors,
        "platform": platform,
        # Sends the Teams stand-in answered 429 (Teams' rate limits): every send it took
        # with a valid token, less those it recorded.
        **({"teams_429s": bench.teams_side().sends() - len(posts)} if platform == TEAMS else {}),
        # The machine's load average (1, 5, 15 min) as the run began and ended: on a shared
        # machine, what its figures were taken under.
        "load_average": [[round(x, 2) for x in load] for load in (load_before, os.getloadavg())],
        **(_pubsub_roles(run, delivered["delivered"]) if mode == PUBSUB_MODE else {}),
    }


def _pubsub_roles(run: _Run, delivered: int) -> dict[str, Any]:
    """A Pub/Sub run's figures by role: `deliver`'s own CPU per delivery (ms), the ticks
    that started before the last delivery (`ticks_during_drain`), and what the ticks
    published: due occurrences (`published`) apart from scan requests (`scans`)."""
    deliver_cpu = sum(r["cpu_seconds"] for r in run.results if r.get("mode") == "deliver")
    ended = max((r["ended"] for r in run.results if r.get("mode") == "deliver"), default=run.go)
    starts = [t for r in run.results for t in r.get("tick_starts", [])]
    ticks = [r["totals"] for r in run.results if r.get("mode") in ("tick", "ticks")]
    handled = sum(
        r["totals"].get("acked", 0) + r["totals"].get("nacked", 0)
        for r in run.results
        if r.get("mode") == "deliver"
    )
    return {
        "deliver_handled": handled,
        # With a tick every few seconds, `deliver` handles fewer messages than were published
        # when the run ends before the last ticks' republishes are served: no redelivery count.
        **({"pubsub_redeliveries": None} if len(starts) > 1 else {}),
        "deliver_cpu_ms_per_delivered": (
            round(1000 * deliver_cpu / delivered, 2) if delivered else None
        ),
        "ticks": len(starts) or len(ticks),
        "ticks_during_drain": sum(1 for t in starts if t <= ended) or len(ticks),
        "tick_published": sum(t.get("published", 0) for t in ticks),
        "tick_scans": sum(t.get("scans", 0) for t in ticks),
    }


@dataclass(frozen=True)
class _Run:
    go: float  # when the start signal was given (epoch seconds)
    results: list[dict[str, Any]]  # each worker's own report
    errors: list[str]
    service_cpu: dict[str, float]  # CPU seconds the services spent during the run


PUBSUB_MODE = "pubsub"
# The Pub/Sub mode's run: how often the bench looks at the stand-in's record for the end
# (each look costs the stand-in the whole record's JSON: counted in its CPU).
_POLL_SECONDS = 1.0


def _run_pubsub(
    bench: Bench, project: str, shape: dict[str, Any], source: Path, seeded: int
) -> _Run:
    """DISPATCH=pubsub: a topic and an ordered subscription in the run's own project, one
    `tick` process publishing everything due and `workers` `deliver` processes consuming the
    subscription (bench.pubsub_roles), released together. The run ends when the stand-in has
    a post for every seeded message (or at the cap): the subscribers are told to stop, and
    finish what they hold."""
    topic = f"projects/{project}/topics/due-occurrences"
    subscription = f"projects/{project}/subscriptions/deliver"
    create_topic(topic)
    create_subscription(topic, subscription)
    extra = {
        "DISPATCH": "pubsub",
        "PUBSUB_TOPIC": topic,
        "ADMIN_TOKEN": "bench-admin-token",
        # One tick publishes the whole backlog (the due query reads at most TICK_LIMIT).
        "TICK_LIMIT": str(max(seeded, 1)),
    }
    roles = ["ticks" if shape.get("tick_every") else "tick", *["deliver"] * shape["workers"]]
    cap = shape["cap_seconds"]

    def delivered_all() -> bool:
        return len({metrics.delivery_id(p) for p in bench.standin.posts()}) >= seeded

    return run_workers(
        bench,
        project,
        shape | {"subscription": subscription},
        source,
        roles=roles,
        extra_env=extra,
        until=lambda go: delivered_all() or time.time() > go + cap,
    )


def run_workers(
    bench: Bench,
    project: str,
    shape: dict[str, Any],
    source: Path,
    *,
    roles: list[str] | None = None,
    extra_env: dict[str, str] | None = None,
    until: Callable[[float], bool] | None = None,
    before_go: Callable[[], float] | None = None,
) -> _Run:
    """The workers started, released together, and waited for (up to their cap). `roles`
    gives each process its mode (default: `workers` processes of the shape's mode); with
    `until`, the bench polls it (given the start time) after the start, then touches the
    stop file the processes watch. `before_go`, once every process is ready, returns when
    (epoch seconds) to release them: the bench waits until then."""
    platform = shape.get("platform", SLACK)
    env = {**os.environ, **bench.env(project, platform), **(extra_env or {})}
    modes = roles or [shape["mode"]] * shape["workers"]
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        configs: list[dict[str, Any]] = [
            shape
            | {
                "mode": mode,
                "index": i,
                "ready": f"{tmp}/ready-{i}",
                "go": f"{tmp}/go",
                "stop": f"{tmp}/stop",
                "result": f"{tmp}/result-{i}.json",
            }
            for i, mode in enumerate(modes)
        ]
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "bench.worker", json.dumps(c)],
                cwd=source,
                env=env,
                stdout=subprocess.DEVNULL,  # the product's log lines: written, not kept
                stderr=subprocess.PIPE,
                text=True,
            )
            for c in configs
        ]
        _wait_ready(configs, procs)
        go_at = before_go() if before_go is not None else 0.0
        time.sleep(max(0.0, go_at - time.time()))
        cpu_before = _service_cpu(bench, platform)
        go = time.time()
        Path(f"{tmp}/go").touch()
        if until is not None:
            while not until(go):
                time.sleep(_POLL_SECONDS)
            Path(f"{tmp}/stop").touch()
        errors = _wait_done(procs, shape["cap_seconds"] + _GRACE)
        cpu_after = _service_cpu(bench, platform)
        results = [
            json.loads(Path(c["result"]).read_text()) for c in configs if Path(c["result"]).exists()
        ]
    cpu = {name: round(cpu_after[name] - cpu_before[name], 2) for name in cpu_before}
    return _Run(go, results, errors, cpu)


def _add_claims(db: firestore.Client, close_pairs: list[dict[str, Any]]) -> None:
    """Who claimed each post of a close pair, and when: the ledger entries say (one read)."""
    ids = [d for pair in close_pairs for d in pair["delivery_ids"]]
    refs = [db.collection(DELIVERIES).document(d) for d in ids]
    entries = read_in_order(db, *refs) if refs else []
    claims = iter({k.value: (e.to_dict() or {}).get(k) for k in _CLAIM_FIELDS} for e in entries)
    for pair in close_pairs:
        pair["claims"] = [next(claims) for _ in pair["delivery_ids"]]


def _service_cpu(bench: Bench, platform: str = SLACK) -> dict[str, float]:
    """CPU seconds so far of the emulator (and of its JIT compiler, a part of it) and the
    platform's stand-in (cumulative, so a run's share is a difference; the bench's own
    reads of the stand-in's record come after a run)."""
    return {
        "emulator": cpu.group_seconds(bench.emulator_pgid),
        "emulator_jit": cpu.compiler_seconds(bench.emulator_pgid),
        "standin": cpu.process_seconds(bench.standin_pid(platform)),
    }


# A warm-up round after which the emulator's JIT compiler spent at most this share of the
# emulator's CPU ends the warm-up; MAX_WARMUP_ROUNDS ends it in any case.
QUIET_JIT_SHARE = 0.1
MAX_WARMUP_ROUNDS = 10


def warm_up(
    bench: Bench, contenders: list[tuple[str, Path]], *, count: int, **shape: Any
) -> list[dict[str, Any]]:
    """Unreported rounds, each a run of every (mode, source tree) contender at full size,
    until the emulator's JVM has compiled what they use: a round whose JIT compiler took
    at most QUIET_JIT_SHARE of the emulator's CPU. On two cores the compiler otherwise
    takes its CPU from the measured runs, whichever came first the most (measured here, in
    2,000-message runs of ours after a small warm-up: 5.6 of the emulator's 9.3 CPU
    seconds in the first, 0.3 of 3.8 in the sixth). Returns each round's figures."""
    rounds: list[dict[str, Any]] = []
    for n in range(MAX_WARMUP_ROUNDS):
        emulator = jit = 0.0
        for k, (mode, source) in enumerate(contenders):
            run = contend(bench, mode, count=count, label=f"warm{n}-{k}", source=source, **shape)
            emulator += run["cpu_seconds"]["emulator"]
            jit += run["cpu_seconds"]["emulator_jit"]
        rounds.append({"emulator_cpu_s": round(emulator, 2), "jit_cpu_s": round(jit, 2)})
        print(
            f"bench: warm-up round {n + 1}: emulator CPU {emulator:.1f} s, JIT {jit:.1f} s of it",
            flush=True,
        )
        if jit <= QUIET_JIT_SHARE * emulator:
            break
    return rounds


def _wait_ready(configs: list[dict[str, Any]], procs: list[subprocess.Popen[str]]) -> None:
    deadline = time.monotonic() + 120
    while not all(Path(c["ready"]).exists() for c in configs):
        failed = [p for p in procs if p.poll() is not None]
        if failed or time.monotonic() > deadline:
            for p in procs:
                p.kill()
            stderr = failed[0].communicate()[1][-2000:] if failed else "timeout"
            raise RuntimeError(f"a benchmark worker did not start: {stderr}")
        time.sleep(0.02)


def _wait_done(procs: list[subprocess.Popen[str]], timeout: float) -> list[str]:
    errors = []
    deadline = time.monotonic() + timeout
    for p in procs:
        try:
            _, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
            errors.append("killed after its cap")
            continue
        if p.returncode != 0:
            errors.append(err[-2000:])
    return errors


def scale(bench: Bench, *, due_count: int, not_due: int, channels: int) -> dict[str, Any]:
    """One pass over `due_count` due messages, without and with `not_due` schedules waiting
    in the future: documents read and pass time, side by side. Both projects are seeded
    before anything is timed, and each is timed twice in alternating order (A B B A, fresh
    due messages each time), so neither the emulator's warm-up nor its digestion of the big
    seeding lands on one side only; the faster of each pair is reported."""
    now = datetime.now(UTC).replace(microsecond=0)
    projects = {"without_not_due": 0, "with_not_due": not_due}
    names = {label: new_project(f"scale-{extra}") for label, extra in projects.items()}
    for label, extra in projects.items():
        if extra:
            db = firestore.Client(project=names[label])
            seeding.seed(db, "later-", extra, channels, now + timedelta(days=1))
    trials: dict[str, list[dict[str, Any]]] = {label: [] for label in projects}
    order = [*projects, *reversed(projects)]
    for trial, label in enumerate(order):
        trials[label].append(_timed_pass(bench, names[label], f"due{trial}-", due_count, channels))
    figures = {}
    for label, extra in projects.items():
        best = min(trials[label], key=lambda t: t["tick_seconds"])
        figures[label] = {
            "not_due": extra,
            "due": due_count,
            **best,
            "tick_seconds_trials": [t["tick_seconds"] for t in trials[label]],
            "documents_read_trials": [t["documents_read"] for t in trials[label]],
            "empty_due_query_seconds_trials": [t["empty_due_query_seconds"] for t in trials[label]],
            "duplicates": sum(t["duplicates"] for t in trials[label]),
            "lost": sum(t["lost"] for t in trials[label]),
        }
    return figures


def _timed_pass(
    bench: Bench, project: str, prefix: str, due_count: int, channels: int
) -> dict[str, Any]:
    db = firestore.Client(project=project)
    # Channels of its own: a pass never meets the slots an earlier trial's pass took.
    tag = prefix.upper().replace("-", "")
    seeded = seeding.seed(db, prefix, due_count, channels, datetime.now(UTC), tag)
    bench.standin.reset()
    counter = RpcCounter()
    settings = Settings.from_env(bench.env(project))
    rt = Runtime(
        settings=settings,
        db=CountedClient(project, counter),
        slack=SlackTransport("xoxb-bench", settings.slack_api_url, 10),
        clock=SystemClock(),
        worker_id=new_worker_id(),
    )
    list(rt.db.collection("bench_warmup").limit(1).stream())
    counter.reset()
    # The pass's own log lines would bury the report; they are written, not kept.
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        started = time.perf_counter()
        summary = run_kind(rt, MESSAGE_KIND)
        elapsed = time.perf_counter() - started
    rpcs = counter.snapshot()
    # The due query alone, now that nothing is due: what the emulator spends finding that.
    started = time.perf_counter()
    MESSAGE_KIND.queue.due(rt.db, rt.clock.now(), settings.tick_limit)
    query_seconds = time.perf_counter() - started
    delivered = metrics.deliveries(seeded, bench.standin.posts(), time.time())
    return {
        "tick_seconds": round(elapsed, 3),
        # The pass without its queries: what is ours, not the emulator's scan (see README).
        "tick_seconds_without_queries": round(
            elapsed - rpcs["stream_seconds"].get("RunQuery", 0.0), 3
        ),
        "query_seconds": rpcs["stream_seconds"].get("RunQuery", 0.0),
        "empty_due_query_seconds": round(query_seconds, 3),
        "documents_read": rpcs["documents"],
        "documents_read_by": rpcs["documents_by"],
        "rpcs": rpcs["calls"],
        "sent": summary["sent"],
        "duplicates": delivered["duplicates"],
        "lost": delivered["lost"],
    }
