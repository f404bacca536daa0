"""Overlapping inline passes (issue 34, point 5): does a page drain as fast with N workers
started together as with one?

    python -m bench.overlap [--messages 300] [--channels 300] [--latency-ms 20]
                            [--workers 1,2,6] [--trials 3] [--against REV]

`--messages` one-offs due now over `--channels` channels, the Slack stand-in answering after
`--latency-ms`; for each N in `--workers`, N processes of the product's inline pass
(`bench.contenders.run_ours`: passes back to back until idle, as `targets.worker
--until-idle` runs them) released together on a fresh project. Per run: msg/s to drain,
claims lost (the passes' `duplicates`: a claim another pass won), Firestore RPCs and
refused writes per delivery, duplicates and lost posts. With `--against REV`, the same runs
of REV's tree (bench.compare.export) take turns with this checkout's, so both are measured
under the same load. Each (tree, N) reports its median trial by msg/s.

`shares` is the floor to hold them to: for each N above 1, N workers running this
checkout's pass, each delivering only a fixed share of every page it reads
(bench.contenders, `shares`), so no two ever claim the same document. What they drain is
the best N overlapping passes could do on this machine, where N processes, the emulator
and the stand-in share its cores.

`run_overlap(bench, ...) -> dict` is the same for a caller holding a started bench
(bench.runs.started)."""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from bench.compare import export
from bench.runs import Bench, contend, started
from bench.services import ROOT

MESSAGES = 300
CHANNELS = 300
LATENCY_MS = 20.0
WORKERS = (1, 2, 6)
CAP_SECONDS = 120.0


def figures(run: dict[str, Any]) -> dict[str, Any]:
    """What one run says about overlap."""
    delivered = run["delivered"] or 1
    totals = run["worker_totals"]
    return {
        "workers": run["workers"],
        "messages_per_s": run["messages_per_s"],
        "drain_s": run["drain_s"],
        "delivered": run["delivered"],
        "duplicates": run["duplicates"],
        "lost": run["lost"],
        "claims_lost": totals.get("duplicates", 0),
        "passes": totals.get("ticks", 0),
        "rpcs_per_delivered": run["rpcs_per_delivered"],
        "commits_per_delivered": round(run["rpcs"].get("Commit", 0) / delivered, 2),
        "refused_writes_per_delivered": run["billing_per_delivered"].get("refused_writes"),
        "reads_per_delivered": run["billing_per_delivered"].get("reads"),
        "worker_cpu_ms_per_delivered": round(1000 * run["cpu_seconds"]["workers"] / delivered, 2),
        "emulator_cpu_ms_per_delivered": round(
            1000 * run["cpu_seconds"]["emulator"] / delivered, 2
        ),
        "capped": run["capped"],
        "load_average": run["load_average"],
    }


def run_overlap(
    bench: Bench,
    *,
    messages: int = MESSAGES,
    channels: int = CHANNELS,
    workers: tuple[int, ...] = WORKERS,
    trials: int = 1,
    sources: dict[str, Path] | None = None,
    cap_seconds: float = CAP_SECONDS,
) -> dict[str, Any]:
    """For each source tree (default: this checkout, as "ours") and each N in `workers`, N
    inline workers started together on `messages` due one-offs over `channels`; `trials`
    rounds, the trees and Ns taking turns within each. Returns, per tree, per N, the median
    trial by msg/s with every trial's msg/s, and `slowest_vs_one`: the slowest N's msg/s
    over one worker's."""
    trees = sources or {"ours": ROOT}
    runs: dict[str, dict[int, list[dict[str, Any]]]] = {t: {n: [] for n in workers} for t in trees}
    shares: dict[int, list[dict[str, Any]]] = {n: [] for n in workers if n > 1}
    for name, source in trees.items():  # unreported: the emulator's JIT warms on every tree
        contend(
            bench,
            "ours",
            count=messages,
            channels=channels,
            workers=max(workers),
            cap_seconds=cap_seconds,
            label=f"warm-{name}",
            source=source,
        )
    for trial in range(trials):
        for n in workers:
            for name, source in trees.items():
                label = f"overlap-{name}-{n}-{trial}"
                run = contend(
                    bench,
                    "ours",
                    count=messages,
                    channels=channels,
                    workers=n,
                    cap_seconds=cap_seconds,
                    label=label,
                    source=source,
                )
                runs[name][n].append(figures(run))
                print(f"bench.overlap: {name} N={n} trial {trial + 1}: {_line(runs[name][n][-1])}")
            if n > 1:
                run = contend(
                    bench,
                    "shares",
                    count=messages,
                    channels=channels,
                    workers=n,
                    cap_seconds=cap_seconds,
                    label=f"overlap-shares-{n}-{trial}",
                )
                shares[n].append(figures(run))
                print(f"bench.overlap: shares N={n} trial {trial + 1}: {_line(shares[n][-1])}")
    summaries = {name: _summary(by_n) for name, by_n in runs.items()}
    return {
        "shape": {"messages": messages, "channels": channels, "trials": trials},
        **summaries,
        "shares": _floor(shares, summaries[next(n for n, src in trees.items() if src == ROOT)]),
    }


def _summary(by_n: dict[int, list[dict[str, Any]]]) -> dict[str, Any]:
    medians = {n: _median(trials) for n, trials in by_n.items()}
    rates = {n: m["messages_per_s"] or 0.0 for n, m in medians.items()}
    one = rates.get(1)
    return {
        "by_workers": {str(n): m for n, m in medians.items()},
        "slowest_vs_one": round(min(rates.values()) / one, 2) if one else None,
    }


def _floor(by_n: dict[int, list[dict[str, Any]]], ours: dict[str, Any]) -> dict[str, Any]:
    """The shares' medians, and `slowest_vs_one`: the slowest N's msg/s over this
    checkout's one worker's (the best overlapping passes could reach here)."""
    medians = {n: _median(trials) for n, trials in by_n.items()}
    one = ours["by_workers"].get("1", {}).get("messages_per_s")
    slowest = min((m["messages_per_s"] or 0.0 for m in medians.values()), default=None)
    return {
        "by_workers": {str(n): m for n, m in medians.items()},
        "slowest_vs_one": round(slowest / one, 2) if one and slowest is not None else None,
    }


def _median(trials: list[dict[str, Any]]) -> dict[str, Any]:
    ordered = sorted(trials, key=lambda t: t["messages_per_s"] or 0.0)
    median = dict(ordered[len(ordered) // 2])
    median["messages_per_s_trials"] = [t["messages_per_s"] for t in trials]
    median["claims_lost_trials"] = [t["claims_lost"] for t in trials]
    return median


def _line(f: dict[str, Any]) -> str:
    return (
        f"{f['messages_per_s']} msg/s, {f['claims_lost']} claims lost, "
        f"{f['rpcs_per_delivered']} RPCs/delivery, {f['duplicates']} duplicates, "
        f"{f['lost']} lost"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.overlap", description=__doc__)
    parser.add_argument("--messages", type=int, default=MESSAGES)
    parser.add_argument("--channels", type=int, default=CHANNELS)
    parser.add_argument("--latency-ms", type=float, default=LATENCY_MS)
    parser.add_argument(
        "--workers", type=lambda text: tuple(int(n) for n in text.split(",")), default=WORKERS
    )
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--cap", type=float, default=CAP_SECONDS)
    parser.add_argument("--against", help="a git revision measured in turns with this checkout")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-overlap-") as tmp:
        sources = {"ours": ROOT}
        if args.against:
            sources = {args.against: export(args.against, Path(tmp)), "ours": ROOT}
        with started(args.latency_ms) as bench:
            result = run_overlap(
                bench,
                messages=args.messages,
                channels=args.channels,
                workers=args.workers,
                trials=args.trials,
                sources=sources,
                cap_seconds=args.cap,
            )
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
