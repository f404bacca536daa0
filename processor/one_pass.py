"""One processing pass, as the `tick` target and the worker loop run it: rotations (few,
and due at a fixed local time) first, then messages."""

from __future__ import annotations

from typing import Any

from core.runtime import Runtime
from processor.outcome import SUMMARY_KEYS
from processor.tick import run_tick
from rotations.tick import preview_rotations, run_rotations


def run_pass(rt: Runtime, *, dry_run: bool = False) -> dict[str, Any]:
    """One pass: the summary counts cover messages and rotations together; `rotations`
    repeats the rotations' share of them."""
    if dry_run:
        rotation_previews = preview_rotations(rt)
        summary = run_tick(rt, dry_run=True)
        summary["previews"] = rotation_previews + summary["previews"]
        summary["rotations"] = dict.fromkeys(SUMMARY_KEYS, 0)
        return summary
    rotations = run_rotations(rt)
    summary = run_tick(rt)
    for key in SUMMARY_KEYS:
        summary[key] += rotations[key]
    summary["rotations"] = {key: rotations[key] for key in SUMMARY_KEYS}
    return summary
