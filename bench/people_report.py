"""The people section's table and targets (bench.people), for bench.report."""

from __future__ import annotations

from typing import Any

from bench.people import GATE_COLLECTIONS, TARGET_GATE_READS
from core.store import CATEGORIES, PEOPLE, PREFERENCES

# The documents a person's gates read that are theirs (the categories are every person's).
PERSONAL_COLLECTIONS = (PREFERENCES, PEOPLE)


def _runs(runs: dict[str, Any], kind: str) -> list[tuple[str, dict[str, Any]]]:
    return sorted((k, v) for k, v in runs.items() if k.startswith(f"people_{kind}_"))


def targets(runs: dict[str, Any]) -> list[dict[str, Any]]:
    """Each people run exactly once; each gated run's invariants, its skips as the gates
    should come to them, and the gates' reads per person per pass against the issue's
    target (beside the plain run of the same worker count, whose gates read nothing)."""
    checks = []
    for label, run in _runs(runs, "gates") + _runs(runs, "plain"):
        checks.append(
            _check(
                f"{label}: each occurrence exactly once (sent xor skipped, one post per send)",
                [run["duplicates"], run["lost"], run["skipped_but_posted"], run["wrong_channel"]],
                run["exactly_once"] and not run["capped"],
                "duplicates, lost, skipped but posted, posted outside the person's DM"
                + ("; CAPPED" if run["capped"] else ""),
            )
        )
    for label, run in _runs(runs, "gates"):
        inv = run["invariants"]
        checks.append(
            _check(
                f"{label}: no opted-out nudge, at most one quiet-window send a person, no cap "
                "exceeded",
                [inv["opted_out_sent"], inv["quiet_window_persons_over_one"], inv["caps_exceeded"]],
                inv["hold"],
                "; ".join(inv["examples"]),
            )
        )
        checks.append(
            _check(
                f"{label}: skipped by reason as the gates should come to",
                run["skipped_by_reason"],
                run["skipped_by_reason"] == run["expected_skipped_by_reason"],
                f"expected {run['expected_skipped_by_reason']}",
            )
        )
        per = run["gate_reads_per_person_pass"]
        personal = sum(per[c] or 0 for c in PERSONAL_COLLECTIONS)
        checks.append(
            _check(
                f"{label}: the gates read <= {TARGET_GATE_READS} document per person per pass",
                round(personal, 3),
                personal <= TARGET_GATE_READS,
                ", ".join(f"{c} {per[c]}" for c in GATE_COLLECTIONS)
                + f" per person-pass over {run['person_passes']} person-passes; categories "
                f"(shared, not a person's) {_per_pass(run, CATEGORIES)} per pass in "
                f"{_passes(run)} passes; {run['gate_reads_per_occurrence']} per occurrence",
            )
        )
    return checks


def lines(runs: dict[str, Any]) -> list[str]:
    """One row per people run: drain, rates, outcomes, exactly-once, cost per delivery."""
    rows = _runs(runs, "gates") + _runs(runs, "plain")
    if not rows:
        return []
    out = [
        "",
        f"{'people run':<18}{'W':>3}{'occ':>6}{'drain s':>9}{'sent/s':>8}{'sent':>6}"
        f"{'opted':>7}{'quiet':>7}{'cap':>5}{'dup':>5}{'lost':>5}{'RPC/sent':>9}"
        f"{'billed r/w per sent':>21}{'gate reads/person-pass':>24}{'CPU ms/occ w+e+s':>19}  note",
    ]
    for label, run in rows:
        skipped = run["skipped_by_reason"]
        per = run["billing_per_delivered"]
        gate = run["gate_reads_per_person_pass_total"]
        note = f"passes {_passes(run)}, lag p50/p99 {run['lag_p50_s']}/{run['lag_p99_s']} s"
        note += f", load {run['load_average'][0][0]}->{run['load_average'][1][0]}"
        if run["capped"]:
            note += " CAPPED"
        out.append(
            f"{label:<18}{run['workers']:>3}{run['occurrences']:>6}{run['drain_s']:>9}"
            f"{run['deliveries_per_s']!s:>8}{run['sent']:>6}{skipped.get('opted_out', 0):>7}"
            f"{skipped.get('quiet_window', 0):>7}{skipped.get('daily_cap', 0):>5}"
            f"{run['duplicates']:>5}{run['lost']:>5}{run['rpcs_per_delivered']!s:>9}"
            f"{per.get('reads')!s:>10}/{per.get('writes')!s:<10}{gate!s:>24}{_cpu(run):>19}  {note}"
        )
    return out


def _cpu(run: dict[str, Any]) -> str:
    """CPU milliseconds per occurrence: workers + emulator + stand-in."""
    cpu = run.get("cpu_seconds", {})
    parts = [cpu.get(name) for name in ("workers", "emulator", "standin")]
    if None in parts or not run["occurrences"]:
        return "-"
    return "+".join(f"{1000 * p / run['occurrences']:.1f}" for p in parts)


def _per_pass(run: dict[str, Any], collection: str) -> float | None:
    passes = _passes(run)
    return round(run["gate_reads"][collection] / passes, 2) if passes else None


def _passes(run: dict[str, Any]) -> int:
    return int(run.get("worker_totals", {}).get("ticks", 0))


def _check(name: str, value: Any, met: bool, note: str = "") -> dict[str, Any]:
    return {"target": name, "value": value, "met": bool(met), "note": note}
