"""`test_utils.orchestrate`, made safe to end a test with.

orchestrate pauses a thread at the trace event that follows a `# pragma: SYNCPOINT` line.
When that line is the last one a thread runs (a function returning from it), the pause falls
on the thread's own final notification, after orchestrate has marked it finished: nobody
ever resumes it, and the interpreter then waits for it forever at exit. Each test function
is therefore followed by one call from here, a file without syncpoints, which takes that
pending pause as an ordinary turn."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from test_utils.orchestrate import orchestrate as _orchestrate


def _after_last_step() -> None:
    """A traced call for a pending pause to land on while the thread is still running."""


def orchestrate(*tests: Callable[[], Any], name: str) -> tuple[int, ...]:
    def settled(test: Callable[[], Any]) -> Callable[[], None]:
        def run() -> None:
            test()
            _after_last_step()

        return run

    counts: tuple[int, ...] = _orchestrate(*(settled(t) for t in tests), name=name)
    return counts


class Rounds:
    """orchestrate runs both sides once per interleaving: whichever starts a round first
    makes a fresh document with `seed`, and the other acts on the same one."""

    def __init__(self, seed: Callable[[], str]) -> None:
        self.seed = seed
        self.arrivals = itertools.count()
        self.messages: list[str] = []

    def message_for_this_round(self) -> str:
        if next(self.arrivals) % 2 == 0:
            self.messages.append(self.seed())
        return self.messages[-1]
