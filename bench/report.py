"""The targets of issue #8, judged against a run's results, and the printed table."""

from __future__ import annotations

from typing import Any

from bench import cost_report, people_report

TARGET_VS_SEED = 5.0
TARGET_VS_FLOOR = 0.5
TARGET_RPCS = 3.0
SCALE_READ_LIMIT = 110
# "Does not grow with the not-due count": the pass may take at most this much longer.
SCALE_TIME_RATIO = 1.5


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a and b else None


def targets(runs: dict[str, Any]) -> list[dict[str, Any]]:
    """Each target of the benchmark, its value and whether it was met."""
    return [
        *_exact(runs),
        *_throughput(runs),
        *_scale(runs),
        *_pacing(runs),
        *people_report.targets(runs),
        *cost_report.targets(runs),
    ]


def _check(name: str, value: Any, met: bool, note: str = "") -> dict[str, Any]:
    return {"target": name, "value": value, "met": bool(met), "note": note}


def _exact(runs: dict[str, Any]) -> list[dict[str, Any]]:
    """No duplicate and nothing lost, in every run that must be exact."""
    checks = []
    exact = {label: runs[label] for label in _TABLE if label in runs and label != "seed"}
    for label, run in exact.items():
        each = run.get("trials_duplicates_lost", [[run["duplicates"], run["lost"]]])
        checks.append(
            _check(
                f"{label}: 0 duplicates, 0 lost" + (" in every trial" if len(each) > 1 else ""),
                each if len(each) > 1 else each[0],
                all(duplicates == 0 and lost == 0 for duplicates, lost in each),
            )
        )
    for label, figures in runs.get("scale", {}).items():
        checks.append(
            _check(
                f"scale {label}: 0 duplicates, 0 lost",
                [figures["duplicates"], figures["lost"]],
                figures["duplicates"] == 0 and figures["lost"] == 0,
            )
        )
    return checks


def _throughput(runs: dict[str, Any]) -> list[dict[str, Any]]:
    if not all(label in runs for label in ("ours", "seed", "floor")):
        return []
    ours, seed, floor = runs["ours"], runs["seed"], runs["floor"]
    vs_seed = _ratio(ours["messages_per_s"], seed["messages_per_s"])
    vs_floor = _ratio(ours["messages_per_s"], floor["messages_per_s"])
    rpcs = ours["rpcs_per_delivered"]
    return [
        _check(
            f"ours/seed-style throughput >= {TARGET_VS_SEED}",
            vs_seed,
            vs_seed is not None and vs_seed >= TARGET_VS_SEED,
            "seed-style was capped: its rate is over the capped window" if seed["capped"] else "",
        ),
        _check(
            f"ours/floor throughput >= {TARGET_VS_FLOOR}",
            vs_floor,
            vs_floor is not None and vs_floor >= TARGET_VS_FLOOR,
        ),
        _check(
            f"ours: Firestore RPCs per delivered one-off <= {TARGET_RPCS}",
            rpcs,
            rpcs is not None and rpcs <= TARGET_RPCS,
        ),
    ]


def _scale(runs: dict[str, Any]) -> list[dict[str, Any]]:
    if "scale" not in runs:
        return []
    without, with_ = runs["scale"]["without_not_due"], runs["scale"]["with_not_due"]
    # The most any trial read, not the fastest trial's figure.
    reads = [max(without["documents_read_trials"]), max(with_["documents_read_trials"])]
    by_rpc = "; ".join(
        ", ".join(f"{k} {v}" for k, v in sorted(f.get("documents_read_by", {}).items()))
        for f in (without, with_)
    )
    times = [without["tick_seconds"], with_["tick_seconds"]]
    queries = [without["empty_due_query_seconds"], with_["empty_due_query_seconds"]]
    in_queries = [without["query_seconds"], with_["query_seconds"]]
    rest = [without["tick_seconds_without_queries"], with_["tick_seconds_without_queries"]]
    return [
        _check(
            f"scale: a pass reads <= {SCALE_READ_LIMIT} documents",
            reads,
            max(reads) <= SCALE_READ_LIMIT,
            f"by RPC: {by_rpc} (BatchGetDocuments: channel pacing slots, read once a claim is "
            "lost)",
        ),
        _check(
            f"scale: pass time with/without not-due <= {SCALE_TIME_RATIO}x",
            times,
            times[1] <= SCALE_TIME_RATIO * times[0],
            f"of which in the pass's queries: {in_queries[0]} s vs {in_queries[1]} s, the rest "
            f"{rest[0]} s vs {rest[1]} s; the due query alone, finding nothing: {queries[0]} s "
            f"vs {queries[1]} s",
        ),
    ]


def _pacing(runs: dict[str, Any]) -> list[dict[str, Any]]:
    checks = []
    for label in _TABLE[3:]:
        if label not in runs:
            continue
        hot = runs[label]
        over = hot["pacing"]["channels_over_one_per_second"]
        checks.append(
            _check(
                f"{label} ({hot['workers']} workers): no channel over one post per second",
                over,
                over == 0,
                f"min gap {hot['pacing']['min_gap_s']} s; lag p99 {hot['lag_p99_s']} s",
            )
        )
    return checks


def _cpu_per_message(run: dict[str, Any]) -> str:
    """CPU milliseconds per delivered message: workers + emulator + stand-in."""
    cpu, delivered = run.get("cpu_seconds", {}), run["delivered"]
    parts = [cpu.get(name) for name in ("workers", "emulator", "standin")]
    if not delivered or None in parts:
        return "-"
    return "+".join(f"{1000 * p / delivered:.1f}" for p in parts)


def _billing(run: dict[str, Any]) -> str:
    """Firestore billing units per delivered message: reads/writes (deletes if any), and
    Pub/Sub publishes per delivered message where there were any."""
    per = run.get("billing_per_delivered") or {}
    text = f"{per.get('reads')}/{per.get('writes')}"
    if per.get("deletes"):
        text += f" del {per['deletes']}"
    if run.get("publishes_per_delivered") is not None:
        text += f" pub {run['publishes_per_delivered']}"
    return text


# The runs of the table, in order; the ones from the fourth on are paced.
_TABLE = (
    "ours",
    "seed",
    "floor",
    "hot_minute",
    "hot_minute_one_worker",
    "pubsub_1",
    "pubsub_2",
    "pubsub_4",
    "platform_slack",
    "platform_teams",
)


def render(result: dict[str, Any]) -> str:
    runs = result["runs"]
    labels = [*_TABLE, *sorted(k for k in runs if k.startswith("pubsub_") and k not in _TABLE)]
    lines = [
        "",
        f"{'run':<22}{'W':>3}{'drain s':>9}{'msg/s':>8}{'dup':>5}{'lost':>5}{'RPC/msg':>9}"
        f"{'docs/msg':>9}{'lag p50':>9}{'lag p99':>9}{'CPU ms/msg w+e+s':>20}"
        f"{'billed r/w per msg':>24}  note",
    ]
    if not any(label in runs for label in labels):
        lines = []  # a section run alone (--only people)
    for label in labels:
        run = runs.get(label)
        if run is None:
            continue
        note = "CAPPED" if run["capped"] else ""
        if label == "seed" or run["capped"]:
            note += f" delivered {run['delivered']}/{run['seeded']}"
        if "teams_429s" in run:
            note += f" Teams 429s {run['teams_429s']}"
        if run.get("pubsub_redeliveries"):
            note += f" redelivered {run['pubsub_redeliveries']}"
        if run.get("load_average"):
            note += f" load {run['load_average'][0][0]}->{run['load_average'][1][0]}"
        if len(run.get("trials_messages_per_s", [])) > 1:
            note += f" median of msg/s {run['trials_messages_per_s']}"
        delivered = run["delivered"]
        docs = round(run["documents_read"] / delivered, 1) if delivered else None
        lost = run["lost"] if not run["capped"] else "-"
        lines.append(
            f"{label:<22}{run['workers']:>3}{run['drain_s']:>9}{run['messages_per_s']!s:>8}"
            f"{run['duplicates']:>5}{lost:>5}{run['rpcs_per_delivered']!s:>9}{docs!s:>9}"
            f"{run['lag_p50_s']!s:>9}{run['lag_p99_s']!s:>9}{_cpu_per_message(run):>20}"
            f"{_billing(run):>24}  {note.strip()}"
        )
    for label, figures in runs.get("scale", {}).items():
        lines.append(
            f"scale {label}: {figures['due']} due, {figures['not_due']} not due: pass "
            f"{figures['tick_seconds']} s ({figures['query_seconds']} s of it in queries), "
            f"{figures['documents_read']} documents read; the due query alone, finding "
            f"nothing: {figures['empty_due_query_seconds']} s"
        )
    lines += people_report.lines(runs)
    lines += cost_report.lines(runs)
    lines.append(_jit_line(result))
    machine = result.get("machine", {})
    lines.append(
        f"load average (1/5/15 min) as the reported runs began: "
        f"{machine.get('load_average_before')}, as they ended: {machine.get('load_average_after')}"
    )
    lines.append("")
    for check in result["targets"]:
        mark = "MET   " if check["met"] else "MISSED"
        note = f"  ({check['note']})" if check["note"] else ""
        lines.append(f"{mark} {check['target']}: {check['value']}{note}")
    return "\n".join(lines)


def _jit_line(result: dict[str, Any]) -> str:
    """How warm the emulator was: the warm-up's rounds, and what its JIT compiler still took
    of the emulator's CPU seconds (counted in "e" above) in the reported runs."""
    rounds = result.get("warmup", [])
    taken = ", ".join(
        f"{label} {cpu['emulator_jit']} of {cpu['emulator']}"
        for label, run in result["runs"].items()
        if isinstance(run, dict) and "emulator_jit" in (cpu := run.get("cpu_seconds", {}))
    )
    last = rounds[-1] if rounds else {}
    return (
        f"emulator JIT: {len(rounds)} warm-up rounds (the last: {last.get('jit_cpu_s')} of "
        f"{last.get('emulator_cpu_s')} CPU s); in the runs, JIT CPU s of emulator CPU s: {taken}"
    )
