"""A worker process that SIGKILLs itself at a named crash point of the first send it meets:
in one pass (over every kind, or, given `module:NAME` of a kind, over that kind alone), or
in one `POST /events` request to the `api` target (an event's first caller), on the test's
clock.

    python -m tests.support.crash_worker POINT <now ISO-8601> [module:NAME]
    python -m tests.support.crash_worker POINT <now ISO-8601> --event '<JSON body>'

POINT: `after_claim` (claimed, nothing posted), `after_post` (Slack has recorded the post,
its outcome is never written) or `mid_finalize` (killed while the outcome's commit is in
flight or just after it). The crash points are installed by wrapping the production
functions, so the code under test is unchanged up to the instant of death."""

from __future__ import annotations

import os
import random
import signal
import sys
import threading
import time
from collections.abc import Callable
from datetime import datetime
from importlib import import_module
from typing import Any

import functions_framework

import composer.routes as routes
import events.notify as notify
import processor.deliver as deliver
import processor.finalize as finalize
from core.clock import FixedClock
from core.runtime import runtime_for
from core.settings import Settings
from processor.abc import Claim
from processor.claim import claim_occurrence
from processor.kind_pass import run_kind
from targets.kinds import run_pass
from tests.fixtures.runtime import MAIN


def die(*args: Any) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def install(point: str) -> None:
    """Rebind the names the sends call (a pass's, and an event's first caller's); the rest
    is untouched."""
    if point == "after_claim":
        setattr(deliver, "claim_occurrence", _dying_after(claim_occurrence))  # noqa: B010
        real_claim_new = getattr(notify, "claim_new")  # noqa: B009 (rebound here)
        setattr(notify, "claim_new", _dying_after(real_claim_new))  # noqa: B010
    elif point == "after_post":
        setattr(deliver, "finalize", die)  # noqa: B010
        setattr(notify, "finalize", die)  # noqa: B010
    elif point == "mid_finalize":
        finalize._commit = _dying(finalize._commit)
    else:
        raise SystemExit(f"unknown crash point {point!r}")


def _dying_after(claim: Callable[..., Any]) -> Callable[..., Any]:
    def claim_then_die(*args: Any, **kwargs: Any) -> Any:
        result = claim(*args, **kwargs)
        if isinstance(result, Claim):
            die()
        return result

    return claim_then_die


def _dying(real_commit: Any) -> Any:
    def commit_and_die(*args: Any) -> None:
        # The kill lands while the commit is in flight or just after it: both are "in the
        # middle of finalize" from the outside.
        threading.Timer(random.uniform(0, 0.004), die).start()
        real_commit(*args)
        time.sleep(30)

    return commit_and_die


def _post_event(body: str, clock: FixedClock) -> None:
    setattr(routes, "runtime_for", lambda s: runtime_for(s).with_clock(clock))  # noqa: B010
    client = functions_framework.create_app(target="api", source=MAIN).test_client()
    client.post(
        "/events",
        data=body,
        content_type="application/json",
        headers={"Authorization": f"Bearer {os.environ['ADMIN_TOKEN']}"},
    )


if __name__ == "__main__":
    install(sys.argv[1])
    clock = FixedClock(datetime.fromisoformat(sys.argv[2]))
    rest = sys.argv[3:]
    if rest[:1] == ["--event"]:
        _post_event(rest[1], clock)
    else:
        rt = runtime_for(Settings.from_env()).with_clock(clock)
        if rest:
            module, _, name = rest[0].partition(":")
            run_kind(rt, getattr(import_module(module), name))
        else:
            run_pass(rt)
    raise SystemExit("the crash point was never reached")
