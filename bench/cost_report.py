"""Issue 34's figures and targets, for bench.report: the quiet minute's precision
(bench.precision), the hot minute's per-delivery costs under Pub/Sub with a tick every few
seconds while `deliver` drains, the scale-out runs (bench.scale_out) and the overlapping
inline passes (bench.overlap)."""

from __future__ import annotations

from typing import Any

from bench.precision import TARGET_P99_AFTER_TICK_S

TARGET_READS = 1.1
TARGET_PUBLISHES = 1.05
TARGET_DELIVER_CPU_MS = 10.0
MIN_TICKS_DURING_DRAIN = 5
# "The tick's own time stays flat": at the largest size at most this much longer than at
# the smallest, per SHARDS.
FLAT_TICK_RATIO = 2.0


def _check(name: str, value: Any, met: bool, note: str = "") -> dict[str, Any]:
    return {"target": name, "value": value, "met": bool(met), "note": note}


def _pubsub_runs(runs: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return sorted((k, v) for k, v in runs.items() if k.startswith("pubsub_"))


def targets(runs: dict[str, Any]) -> list[dict[str, Any]]:
    return [*_precision(runs), *_hot(runs), *_scale_out(runs), *_overlap(runs)]


def _precision(runs: dict[str, Any]) -> list[dict[str, Any]]:
    checks = []
    for dispatch, run in runs.get("precision", {}).items():
        p99 = run["after_tick_start_s"]["p99"]
        checks.append(
            _check(
                f"precision {dispatch}: p99 posted - tick start <= {TARGET_P99_AFTER_TICK_S} s, "
                "0 duplicates, 0 lost",
                [p99, run["duplicates"], run["lost"]],
                p99 is not None
                and p99 <= TARGET_P99_AFTER_TICK_S
                and run["duplicates"] == 0
                and run["lost"] == 0,
                f"p50 {run['after_tick_start_s']['p50']} s; posted - due p50/p99 "
                f"{run['after_due_s']['p50']}/{run['after_due_s']['p99']} s",
            )
        )
    return checks


def _hot(runs: dict[str, Any]) -> list[dict[str, Any]]:
    checks = []
    for label, run in _pubsub_runs(runs):
        per = run.get("billing_per_delivered") or {}
        reads, publishes = per.get("reads"), run.get("publishes_per_delivered")
        cpu = run.get("deliver_cpu_ms_per_delivered")
        ticks = run.get("ticks_during_drain", 0)
        backlog = f"{ticks} ticks during the drain"
        checks += [
            _check(
                f"{label}: billed reads per delivery <= {TARGET_READS}",
                reads,
                reads is not None and reads <= TARGET_READS,
                backlog,
            ),
            _check(
                f"{label}: publishes per delivery <= {TARGET_PUBLISHES} over a "
                f"{MIN_TICKS_DURING_DRAIN}-tick backlog",
                publishes,
                publishes is not None
                and publishes <= TARGET_PUBLISHES
                and ticks >= MIN_TICKS_DURING_DRAIN,
                f"{backlog}; scan requests apart: {run.get('tick_scans', 0)}",
            ),
            _check(
                f"{label}: deliver CPU per delivery <= {TARGET_DELIVER_CPU_MS} ms",
                cpu,
                cpu is not None and cpu <= TARGET_DELIVER_CPU_MS,
            ),
        ]
    return checks


def _scale_out(runs: dict[str, Any]) -> list[dict[str, Any]]:
    section = runs.get("scale_out")
    if not section:
        return []
    checks = []
    every = [r for r in section["runs"] if r["all_published_s"] is not None]
    checks.append(
        _check(
            "scale-out: every due document published in every run",
            f"{len(every)} of {len(section['runs'])} runs",
            len(every) == len(section["runs"]),
        )
    )
    for shards in sorted({r["shards"] for r in section["runs"]}):
        mine = sorted((r for r in section["runs"] if r["shards"] == shards), key=lambda r: r["due"])
        times = [r["tick_seconds"] for r in mine]
        if len(mine) < 2 or None in times:
            continue
        checks.append(
            _check(
                f"scale-out SHARDS={shards}: the tick's time at {mine[-1]['due']} due <= "
                f"{FLAT_TICK_RATIO}x at {mine[0]['due']}",
                times,
                times[-1] <= FLAT_TICK_RATIO * times[0],
                "the fan-out is in the tree" if section["fan_out"] else "no fan-out in the tree",
            )
        )
    return checks


def _overlap(runs: dict[str, Any]) -> list[dict[str, Any]]:
    section = runs.get("overlap") or {}
    return [
        _check(
            f"overlap ({tree}): N overlapping inline passes drain at least as fast as one",
            figures["slowest_vs_one"],
            figures["slowest_vs_one"] is not None and figures["slowest_vs_one"] >= 1.0,
            "slowest N's msg/s over one worker's",
        )
        for tree, figures in section.items()
        if isinstance(figures, dict) and "slowest_vs_one" in figures and tree != "shares"
    ]


def lines(runs: dict[str, Any]) -> list[str]:
    """The sections' lines for the printed report."""
    out = []
    for dispatch, run in runs.get("precision", {}).items():
        due, tick = run["after_due_s"], run["after_tick_start_s"]
        out.append(
            f"precision {dispatch}: {run['delivered']}/{run['messages']} posted; posted - due "
            f"p50 {due['p50']} s p99 {due['p99']} s; posted - tick start p50 {tick['p50']} s "
            f"p99 {tick['p99']} s (the tick started {run['tick_started_after_due_s']} s "
            "after due)"
        )
    for label, run in _pubsub_runs(runs):
        out.append(
            f"{label} per delivery: {run.get('ticks_during_drain')} ticks during the drain, "
            f"billed {_billing(run)}, publishes {run.get('publishes_per_delivered')} (scan "
            f"requests {run.get('tick_scans', 0)} apart), deliver CPU "
            f"{run.get('deliver_cpu_ms_per_delivered')} ms"
        )
    section = runs.get("scale_out")
    if section:
        out.append(f"scale-out (fan-out in the tree: {section['fan_out']}):")
        out.append(
            f"  {'due':>7}{'SHARDS':>8}{'tick s':>9}{'scans':>7}{'all published s':>17}"
            f"{'reads/published':>17}{'seed s':>8}"
        )
        for r in section["runs"]:
            out.append(
                f"  {r['due']:>7}{r['shards']:>8}{r['tick_seconds']!s:>9}"
                f"{r['scan_invocations']:>7}{r['all_published_s']!s:>17}"
                f"{r['reads_per_published']!s:>17}{r['seed_seconds']!s:>8}"
            )
    overlap = runs.get("overlap")
    if overlap is not None:
        for tree, figures in overlap.items():
            if isinstance(figures, dict) and "by_workers" in figures:
                rates = {n: m.get("messages_per_s") for n, m in figures["by_workers"].items()}
                what = " (the floor: each worker its own share)" if tree == "shares" else ""
                out.append(
                    f"overlap {tree}{what}: msg/s by N {rates}, slowest/one "
                    f"{figures.get('slowest_vs_one')}"
                )
    return out


def _billing(run: dict[str, Any]) -> str:
    per = run.get("billing_per_delivered") or {}
    return f"reads {per.get('reads')} writes {per.get('writes')}"
