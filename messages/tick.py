"""The scheduled messages' part of a processing pass: the pipeline's paged pass
(processor.tick) over this kind."""

from __future__ import annotations

from typing import Any

from core.runtime import Runtime
from messages.kind import MESSAGE_KIND
from processor import tick
from processor.history_search import HistoryBudget


def run_tick(
    rt: Runtime, *, dry_run: bool = False, history: HistoryBudget | None = None
) -> dict[str, Any]:
    return tick.run_tick(rt, MESSAGE_KIND, dry_run=dry_run, history=history)
