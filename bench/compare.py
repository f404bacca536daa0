"""Ours at two or more git revisions, taking turns in one emulator (issue #8's tuning):

    python -m bench.compare REV REV [REV...] [--trials 5] [--messages 2000] [--channels 500]
                                             [--workers 8] [--latency-ms 50]

Each revision's tree is exported with `git archive` (committed files only) and its workers
run that tree's code, its `bench.worker` too, which must read this checkout's worker
configuration (true from d25e84e on); the harness (seeding, measuring) is this checkout's.
After the warm-up (bench.runs.warm_up: unreported rounds of every revision until the
emulator's JIT compiler is quiet), the revisions run in turn, --trials times, so a drift
in the machine falls on all of them alike. Prints every run and
each revision's medians: one run of ours varies by a fifth from the next on a two-core
machine, so a change is only believed when it wins most of the pairs."""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from bench.runs import contend, started, warm_up
from bench.services import ROOT

COLUMNS = ("messages_per_s", "rpcs_per_delivered", "docs_per_msg", "worker_ms", "emulator_ms")


def export(rev: str, into: Path) -> Path:
    """The tree of `rev` under `into`, as `git archive` has it (committed files only)."""
    tree = into / rev.replace("/", "_")
    tree.mkdir()
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


def summary(run: dict[str, Any]) -> dict[str, Any]:
    delivered = run["delivered"] or 1
    cpu = run["cpu_seconds"]
    return {
        "messages_per_s": run["messages_per_s"],
        "duplicates": run["duplicates"],
        "lost": run["lost"],
        "rpcs_per_delivered": run["rpcs_per_delivered"],
        "docs_per_msg": round(run["documents_read"] / delivered, 1),
        "worker_ms": round(1000 * cpu["workers"] / delivered, 2),
        "emulator_ms": round(1000 * cpu["emulator"] / delivered, 2),
        "lost_claims": run["worker_totals"].get("duplicates", 0),
        # What explains a message not delivered within the run (a post left ambiguous under
        # its lease, a release for later, an error), when there is one.
        "unsettled": {
            **{k: n for k, n in run["final_statuses"].items() if k != "sent"},
            **{
                k: n
                for k in ("ambiguous", "released", "errors", "deferred")
                if (n := run["worker_totals"].get(k))
            },
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compare", description=__doc__)
    parser.add_argument("revs", nargs="+", metavar="REV")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--channels", type=int, default=500)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    args = parser.parse_args(argv)
    if len(args.revs) < 2 or args.trials < 1:
        parser.error("give two revisions or more, and --trials of at least 1")
    shape = {"channels": args.channels, "workers": args.workers, "cap_seconds": 120.0}
    runs: dict[str, list[dict[str, Any]]] = {rev: [] for rev in args.revs}
    with (
        started(args.latency_ms) as bench,
        tempfile.TemporaryDirectory(prefix="bench-compare-") as tmp,
    ):
        trees = {rev: export(rev, Path(tmp)) for rev in args.revs}
        contenders = [("ours", trees[rev]) for rev in args.revs]
        warm_up(bench, contenders, count=args.messages, **shape)
        for trial in range(args.trials):
            for n, rev in enumerate(args.revs):
                run = contend(
                    bench,
                    "ours",
                    count=args.messages,
                    label=f"rev{n}-{trial}",
                    source=trees[rev],
                    **shape,
                )
                runs[rev].append(summary(run))
                print(f"{rev} trial {trial + 1}: {runs[rev][-1]}", flush=True)
    for rev, done in runs.items():
        medians = {c: statistics.median(r[c] for r in done) for c in COLUMNS}
        lost = [(r["duplicates"], r["lost"]) for r in done]
        print(f"{rev} medians: {medians}; duplicates, lost per trial: {lost}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
