"""One processing pass, as the `tick` target and the worker loop run it: rotations (few,
and due at a fixed local time) first, then messages; and passes back to back until idle."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from core.runtime import Runtime
from core.store import ROTATIONS
from processor.history_search import HistoryBudget
from processor.outcome import SUMMARY_KEYS
from processor.pacing import POST_INTERVAL
from processor.tick import io_error, run_tick
from rotations.tick import preview_rotations, run_rotations

Pass = Callable[[Runtime], dict[str, Any]]


def run_pass(rt: Runtime, *, dry_run: bool = False) -> dict[str, Any]:
    """One pass: the summary counts cover messages and rotations together; `rotations`
    repeats the rotations' share of them. The rotations' part raising (a read that failed,
    say) is logged and counted in `errors`, and the messages' part runs all the same."""
    if dry_run:
        rotation_previews = preview_rotations(rt)
        summary = run_tick(rt, dry_run=True)
        summary["previews"] = rotation_previews + summary["previews"]
        summary["rotations"] = dict.fromkeys(SUMMARY_KEYS, 0)
        return summary
    rotations: Counter[str] = Counter()
    history = HistoryBudget.for_pass(rt)  # one budget of history calls for the whole pass
    try:
        rotations = run_rotations(rt, history)
    except Exception as exc:
        io_error(rotations, "the rotations' part of the pass raised", exc, collection=ROTATIONS)
    summary = run_tick(
        rt, history=history
    )  # its reads and writes fail into its `errors`, never out of it
    for key in SUMMARY_KEYS:
        summary[key] += rotations[key]
    summary["rotations"] = {key: rotations[key] for key in SUMMARY_KEYS}
    return summary


def until_idle(
    rt: Runtime, one_pass: Pass = run_pass, go_on: Callable[[], bool] = lambda: True
) -> Iterator[dict[str, Any]]:
    """Passes back to back, each summary as it ends, until one finds nothing due (or
    `go_on` says stop). A pass that found messages due but claimed none is followed by a
    pause of POST_INTERVAL: what is due is other workers' right now (their channels'
    slots), and reading it again at once would only spend reads, the database's and this
    worker's CPU, before a slot can have come."""
    while go_on():
        summary = one_pass(rt)
        yield summary
        if summary["due"] == 0:
            return
        if summary["claimed"] == 0:
            rt.clock.sleep(POST_INTERVAL.total_seconds())
