"""The benchmark (issue #8), in one invocation on one emulator and one stand-in:

    python -m bench [--messages 2000] [--channels 500] [--workers 8] [--latency-ms 50]
                    [--seed-cap 60] [--trials 3] [--quick] [--skip-scale] [--skip-hot]

0. unreported rounds of ours and the floor at full size until the emulator's JIT compiler
   is quiet (a round in which it took at most a tenth of the emulator's CPU; ten rounds at
   most), so its compiling lands on neither contender;
1. ours and the floor, taking turns, --trials times each (the median trial of each is
   reported), then the seed-002 style processor (capped at --seed-cap seconds), on the same
   data: drain time, messages/s, duplicates, lost, Firestore RPCs per delivered message,
   documents read, lag p50/p99, CPU per delivered message;
2. scale: one pass over 100 due messages without and with 100,000 not-due schedules;
3. hot minute: 5,000 messages due at one instant over 500 channels, with --workers workers
   and again with one (the inline mode);
4. the same hot minute under DISPATCH=pubsub (--pubsub-deliver: 1, 2 and 4 `deliver`
   processes; bench.pubsub_roles), after one unreported round: msg/s, lag, duplicates and
   lost, Firestore billing units and Pub/Sub publishes per delivery, beside the inline
   mode's. Every run reports Firestore's billing units per delivery (bench.rpc);
5. people (--people 1000, --people-workers 1,4; bench.people): messages to people through
   three categories' gates, with opt-outs and reached daily caps, beside the same messages
   without categories: sent and skipped by reason, exactly once, the gates' invariants,
   and the documents the gates read per person per pass. `--only people` runs it alone;
6. Slack and Teams (bench.teams): --messages one-offs over --channels Slack channels, and
   the same over as many Teams channels through the Teams stand-in (Teams' own rate
   limits, the same latency), with --workers workers, after one unreported round of each;
   taking turns, --trials times each (the median of each is reported): reads, writes and
   RPCs per delivery, throughput, and Teams' 429s. `--only teams` runs it alone;
7. issue 34: precision (bench.precision: a quiet minute, 50 one-offs due at one instant,
   inline and under Pub/Sub: posted minus due and minus the tick's start, p50/p99;
   `--only precision`); under Pub/Sub the hot minute's tick runs every --tick-every
   seconds while `deliver` drains (a backlog over several ticks: billed reads, writes,
   publishes and `deliver`'s CPU per delivery); scale-out (bench.scale_out: 1,000, 10,000
   and 50,000 due x SHARDS 1, 4, 16, until every due document was published;
   `--only-scale-out`); the overlapping inline passes (bench.overlap; with --only-hot
   too).

Prints a table and the targets, and writes bench/results/bench-<UTC time>.json (and
latest.json). The targets are reported, never asserted: the exit code is 0 unless a run
could not be carried out."""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from bench import report
from bench.overlap import run_overlap
from bench.people import people_runs
from bench.people import warm_up as people_warm_up
from bench.precision import precision
from bench.runs import PUBSUB_MODE, Bench, contend, scale, started, warm_up
from bench.scale_out import SHARDS, SIZES, scale_out
from bench.services import ROOT
from core.platform import SLACK, TEAMS
from processor.kind_pass import PARALLEL_POSTS

RESULTS = ROOT / "bench" / "results"


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--channels", type=int, default=500)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument(
        "--seed-cap",
        type=float,
        default=60.0,
        help="seconds after which the seed-style run stops and reports",
    )
    parser.add_argument(
        "--cap",
        type=float,
        default=300.0,
        help="seconds after which any other run stops and reports",
    )
    parser.add_argument(
        "--trials",
        type=int,
        default=3,
        help="runs of ours and of the floor, taking turns; the median of each is reported",
    )
    parser.add_argument("--scale-not-due", type=int, default=100_000)
    parser.add_argument("--scale-due", type=int, default=100)
    parser.add_argument("--hot-messages", type=int, default=5000)
    parser.add_argument("--hot-channels", type=int, default=500)
    parser.add_argument("--skip-scale", action="store_true")
    parser.add_argument("--skip-hot", action="store_true")
    parser.add_argument(
        "--pubsub-deliver",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[1, 2, 4],
        help="the Pub/Sub mode's `deliver` process counts, comma-separated (default 1,2,4)",
    )
    parser.add_argument("--skip-pubsub", action="store_true")
    parser.add_argument(
        "--tick-every",
        type=float,
        default=None,
        help="under Pub/Sub, the hot minute's tick runs a pass every this many seconds "
        "while `deliver` drains (a backlog over several ticks; default 10, --quick 3)",
    )
    parser.add_argument(
        "--precision-messages",
        type=int,
        default=50,
        help="the quiet minute's one-offs, each on a channel of its own (bench.precision)",
    )
    parser.add_argument("--skip-precision", action="store_true")
    parser.add_argument(
        "--scale-out-sizes",
        type=lambda text: tuple(int(n) for n in text.split(",")),
        default=SIZES,
        help="scale-out: due one-offs per run, comma-separated (default 1000,10000,50000)",
    )
    parser.add_argument(
        "--scale-out-shards",
        type=lambda text: tuple(int(n) for n in text.split(",")),
        default=SHARDS,
        help="scale-out: SHARDS per run, comma-separated (default 1,4,16)",
    )
    parser.add_argument("--skip-scale-out", action="store_true")
    parser.add_argument(
        "--only-scale-out",
        action="store_true",
        help="only the scale-out runs (bench.scale_out), under Pub/Sub",
    )
    parser.add_argument(
        "--skip-overlap", action="store_true", help="leave out the overlapping inline passes"
    )
    parser.add_argument(
        "--only-hot",
        action="store_true",
        help="only the hot minute, inline (one worker) and Pub/Sub: no warm-up rounds, "
        "no ours/floor/seed trials, no scale run",
    )
    parser.add_argument(
        "--people",
        type=int,
        default=1000,
        help="the people section's people (bench.people): 3 categories, opt-outs and caps, "
        "3 or 4 messages each due at one instant, with and without gates",
    )
    parser.add_argument(
        "--people-workers",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[1, 4],
        help="the people section's worker counts, comma-separated (default 1,4)",
    )
    parser.add_argument("--skip-people", action="store_true")
    parser.add_argument(
        "--skip-teams", action="store_true", help="leave out the Slack-and-Teams section"
    )
    parser.add_argument(
        "--only",
        choices=["hot", "people", "teams", "precision", "scale-out"],
        help="one section alone: `hot` as --only-hot; `scale-out` as --only-scale-out; "
        "`precision`: the quiet minute; `people`: the people section, after "
        "an unreported gated and plain round of a quarter size (no Pub/Sub emulator); "
        "`teams`: Slack and Teams side by side (no Pub/Sub emulator; docs/benchmark.md "
        "measures it with --workers 1)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a small smoke run: 400 messages, 100 channels, 4 workers, "
        "10,000 not-due, a 1,000-message hot minute ticked every 3 s, 20 s seed cap, "
        "100 people, scale-out at 1,000 and 5,000 with SHARDS 1 and 4",
    )
    args = parser.parse_args(argv)
    if args.trials < 1:
        parser.error(f"--trials must be at least 1, got {args.trials}")
    if args.quick:
        args.messages, args.channels, args.workers = 400, 100, 4
        args.scale_not_due, args.hot_messages, args.hot_channels = 10_000, 1000, 100
        args.seed_cap, args.people = 20.0, 100
        args.scale_out_sizes, args.scale_out_shards = (1000, 5000), (1, 4)
    if args.tick_every is None:
        args.tick_every = 3.0 if args.quick else 10.0
    if args.only == "hot":
        args.only_hot = True
    if args.only == "scale-out":
        args.only_scale_out = True
    if args.only in ("people", "teams"):
        args.skip_pubsub = True
    return args


def median_trial(trials: list[dict[str, Any]]) -> dict[str, Any]:
    """The trial with the median throughput (the lower of the two middle ones for an even
    count), with every trial's throughput and duplicates and lost beside it."""
    ordered = sorted(trials, key=lambda t: t["messages_per_s"] or 0.0)
    return {
        **ordered[(len(ordered) - 1) // 2],
        "trials_messages_per_s": [t["messages_per_s"] for t in trials],
        "trials_duplicates_lost": [[t["duplicates"], t["lost"]] for t in trials],
    }


def run_all(bench: Bench, args: argparse.Namespace) -> dict[str, Any]:
    """Every run the arguments ask for, in order, on one emulator and one stand-in."""
    runs: dict[str, Any] = {}
    if args.only_hot:
        runs |= timed(runs, "hot", lambda: hot_minute(bench, args, workers=[1]))
        return runs | timed(runs, "overlap", lambda: overlap(bench, args))
    if args.only_scale_out:
        return runs | timed(runs, "scale_out", lambda: {"scale_out": _scale_out(args, bench)})
    if args.only == "precision":
        return runs | timed(runs, "precision", lambda: _precision(args, bench))
    if args.only == "teams":
        return runs | platform_runs(bench, args)
    if args.only == "people":
        print("bench: a gated and a plain round of a quarter size (not reported)...", flush=True)
        people_warm_up(bench, people=args.people, cap_seconds=args.cap)
        return runs | people_runs(
            bench, people=args.people, workers=args.people_workers, cap_seconds=args.cap
        )
    shape = {"count": args.messages, "channels": args.channels, "workers": args.workers}
    # Runs on this machine vary by a third from one to the next, the floor most: ours and
    # the floor take turns, --trials times each, and the median trial of each counts.
    trials: dict[str, list[dict[str, Any]]] = {"ours": [], "floor": []}
    for trial in range(args.trials):
        for mode in trials:
            print(
                f"bench: {mode} ({args.messages} messages, {args.workers} workers), "
                f"trial {trial + 1} of {args.trials}...",
                flush=True,
            )
            trials[mode].append(
                contend(bench, mode, cap_seconds=args.cap, label=f"{mode}{trial}", **shape)
            )
    print(f"bench: seed ({args.messages} messages, {args.workers} workers)...", flush=True)
    runs["seed"] = contend(bench, "seed", cap_seconds=args.seed_cap, **shape)
    for mode, done in trials.items():
        runs[mode] = median_trial(done)
    if not args.skip_scale:
        print(f"bench: scale ({args.scale_due} due, {args.scale_not_due} not due)...", flush=True)
        runs["scale"] = scale(
            bench, due_count=args.scale_due, not_due=args.scale_not_due, channels=args.channels
        )
    if not args.skip_precision:
        runs |= timed(runs, "precision", lambda: _precision(args, bench))
    if not args.skip_hot:
        runs |= timed(runs, "hot", lambda: hot_minute(bench, args, workers=[args.workers, 1]))
    if not args.skip_scale_out and not args.skip_pubsub:
        runs |= timed(runs, "scale_out", lambda: {"scale_out": _scale_out(args, bench)})
    runs |= timed(runs, "overlap", lambda: overlap(bench, args))
    if not args.skip_people:
        runs |= people_runs(
            bench, people=args.people, workers=args.people_workers, cap_seconds=args.cap
        )
    if not args.skip_teams:
        runs |= platform_runs(bench, args)
    return runs


def timed(runs: dict[str, Any], section: str, run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """`run()`'s runs, its wall time kept in runs["section_seconds"] (moved to the result's
    top level by main): how long each part of a run takes."""
    started = time.perf_counter()
    done = run()
    runs.setdefault("section_seconds", {})[section] = round(time.perf_counter() - started, 1)
    return done


def _precision(args: argparse.Namespace, bench: Bench) -> dict[str, Any]:
    print("bench: precision, the quiet minute...", flush=True)
    return {"precision": precision(bench, messages=args.precision_messages)}


def _scale_out(args: argparse.Namespace, bench: Bench) -> dict[str, Any]:
    return scale_out(
        bench, sizes=args.scale_out_sizes, shards=args.scale_out_shards, cap_seconds=args.cap
    )


def overlap(bench: Bench, args: argparse.Namespace) -> dict[str, Any]:
    """N overlapping inline passes (bench.overlap, issue 34 point 5)."""
    if args.skip_overlap:
        return {}
    print("bench: overlapping inline passes...", flush=True)
    result: dict[str, Any] = run_overlap(bench)
    return {"overlap": result}


def platform_runs(bench: Bench, args: argparse.Namespace) -> dict[str, Any]:
    """The same due one-offs posted to Slack channels and to Teams channels by `ours`, on
    one emulator: one unreported round of each (the Teams stand-in's first token, the
    emulator's JIT), then taking turns, --trials times each; the median trial of each."""
    shape = {"count": args.messages, "channels": args.channels, "workers": args.workers}
    platforms = {"platform_slack": SLACK, "platform_teams": TEAMS}
    print("bench: a Slack and a Teams round (not reported)...", flush=True)
    for name in platforms.values():
        contend(bench, "ours", cap_seconds=args.cap, label=f"warm-{name}", platform=name, **shape)
    trials: dict[str, list[dict[str, Any]]] = {label: [] for label in platforms}
    for trial in range(args.trials):
        for label, name in platforms.items():
            print(
                f"bench: {name} ({args.messages} messages, {args.workers} workers), "
                f"trial {trial + 1} of {args.trials}...",
                flush=True,
            )
            run = contend(
                bench,
                "ours",
                cap_seconds=args.cap,
                label=f"{name}{trial}",
                platform=name,
                **shape,
            )
            trials[label].append(run)
    return {label: median_trial(done) for label, done in trials.items()}


def hot_minute(bench: Bench, args: argparse.Namespace, workers: list[int]) -> dict[str, Any]:
    """The hot minute inline, with each of `workers` workers, and under DISPATCH=pubsub with
    each of --pubsub-deliver `deliver` processes: the same seeded shape every time."""
    runs: dict[str, Any] = {}
    shape = {"count": args.hot_messages, "channels": args.hot_channels, "cap_seconds": args.cap}
    for n in workers:
        label = "hot_minute_one_worker" if n == 1 else "hot_minute"
        print(f"bench: hot minute ({args.hot_messages} messages), {n} worker(s)...", flush=True)
        runs[label] = contend(bench, "ours", workers=n, label=f"hot{n}", **shape)
    if args.skip_pubsub:
        return runs
    # The Pub/Sub emulator's JVM compiles its hot paths in its first minutes of load too.
    print("bench: Pub/Sub warm-up round (not reported)...", flush=True)
    contend(bench, PUBSUB_MODE, workers=max(args.pubsub_deliver), label="pswarm", **shape)
    for n in args.pubsub_deliver:
        print(
            f"bench: hot minute under Pub/Sub, {n} deliver process(es), a tick every "
            f"{args.tick_every} s...",
            flush=True,
        )
        runs[f"pubsub_{n}"] = contend(
            bench, PUBSUB_MODE, workers=n, label=f"ps{n}", tick_every=args.tick_every, **shape
        )
    return runs


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    started_at = time.time()
    teams = args.only == "teams" or (
        args.only is None and not args.only_hot and not args.only_scale_out and not args.skip_teams
    )
    with started(args.latency_ms, pubsub=not args.skip_pubsub, teams=teams) as bench:
        # The emulator's JVM compiles its hot paths during the first minutes of load, on
        # the cores the contenders share: rounds of both first, until its compiler is quiet.
        warmup: list[dict[str, Any]] = []
        if not args.only_hot and not args.only_scale_out and args.only is None:
            print("bench: warming the emulator up...", flush=True)
            warmup = warm_up(
                bench,
                [("ours", ROOT), ("floor", ROOT)],
                count=args.messages,
                channels=args.channels,
                workers=args.workers,
                cap_seconds=args.cap,
            )
        load_before = os.getloadavg()
        runs = run_all(bench, args)
        load_after = os.getloadavg()
    result = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            # Other work on the machine moves every figure: the load average (1, 5, 15 min)
            # as the reported runs began and as they ended.
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in load_after],
        },
        "parameters": {**vars(args), "parallel_posts_per_worker": PARALLEL_POSTS},
        "warmup": warmup,
        "runs": runs,
        "section_seconds": runs.pop("section_seconds", {}),
        "targets": report.targets(runs),
        "wall_seconds": round(time.time() - started_at, 1),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    text = json.dumps(result, indent=2, sort_keys=True, default=str)
    (RESULTS / f"bench-{stamp}.json").write_text(text)
    (RESULTS / "latest.json").write_text(text)
    print(report.render(result))
    print(f"bench: results in {RESULTS / f'bench-{stamp}.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
