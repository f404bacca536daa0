"""A worker process that runs one pass and SIGKILLs itself at a named crash point, in the
first delivery it meets: of any kind, or, given `module:NAME` of a kind, of that kind alone.

    python -m tests.support.crash_worker after_claim|after_post|mid_finalize <now ISO-8601> \
        [module:NAME]

The crash points are installed by wrapping the processor's own functions, so the code under
test is the production code, unchanged, up to the instant of death."""

from __future__ import annotations

import os
import random
import signal
import sys
import threading
import time
from datetime import datetime
from importlib import import_module
from typing import Any

import processor.deliver as deliver
import processor.finalize as finalize
from core.clock import FixedClock
from core.runtime import runtime_for
from core.settings import Settings
from processor.abc import Claim
from processor.claim import claim_occurrence
from processor.tick import run_tick
from targets.kinds import run_pass


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def install(point: str) -> None:
    if point == "after_claim":

        def claim_then_die(*args: Any) -> Any:
            result = claim_occurrence(*args)
            if isinstance(result, Claim):
                die()
            return result

        # Rebind the name the deliveries call; the rest of the pass is untouched.
        setattr(deliver, "claim_occurrence", claim_then_die)  # noqa: B010
    elif point == "after_post":
        # Slack has recorded the post; the outcome is never written.
        setattr(deliver, "finalize", lambda *args: die())  # noqa: B010
    elif point == "mid_finalize":
        finalize._commit = _dying(finalize._commit)
    else:
        raise SystemExit(f"unknown crash point {point!r}")


def _dying(real_commit: Any) -> Any:
    def commit_and_die(*args: Any) -> None:
        # The kill lands while the commit is in flight or just after it: both are "in the
        # middle of finalize" from the outside.
        threading.Timer(random.uniform(0, 0.004), die).start()
        real_commit(*args)
        time.sleep(30)

    return commit_and_die


if __name__ == "__main__":
    install(sys.argv[1])
    rt = runtime_for(Settings.from_env()).with_clock(
        FixedClock(datetime.fromisoformat(sys.argv[2]))
    )
    if len(sys.argv) > 3:
        module, _, name = sys.argv[3].partition(":")
        run_tick(rt, getattr(import_module(module), name))
    else:
        run_pass(rt)
    raise SystemExit("the crash point was never reached")
