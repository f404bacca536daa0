"""A process that makes one `POST /events` request to the `api` target and SIGKILLs itself at
a named crash point of its send, on the test's clock:

    python -m tests.support.crash_event after_claim|after_post '<JSON body>' <now ISO-8601>

`after_claim`: the event and its ledger entry are created, nothing is posted. `after_post`:
Slack has recorded the post, its outcome is never written. The crash points wrap the
production functions; everything up to the instant of death is unchanged."""

from __future__ import annotations

import os
import signal
import sys
from datetime import datetime
from typing import Any

import functions_framework

import composer.routes as routes
import events.notify as notify
from core.clock import FixedClock
from core.runtime import runtime_for
from processor.abc import Claim
from tests.fixtures.runtime import MAIN


def die(*args: Any) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def install(point: str) -> None:
    real_claim = getattr(notify, "claim_new")  # noqa: B009 (rebound below)
    if point == "after_claim":

        def claim_then_die(*args: Any) -> Any:
            claim = real_claim(*args)
            if isinstance(claim, Claim):
                die()
            return claim

        setattr(notify, "claim_new", claim_then_die)  # noqa: B010
    elif point == "after_post":
        setattr(notify, "finalize", die)  # noqa: B010
    else:
        raise SystemExit(f"unknown crash point {point!r}")


if __name__ == "__main__":
    install(sys.argv[1])
    clock = FixedClock(datetime.fromisoformat(sys.argv[3]))
    setattr(routes, "runtime_for", lambda s: runtime_for(s).with_clock(clock))  # noqa: B010
    client = functions_framework.create_app(target="api", source=MAIN).test_client()
    client.post(
        "/events",
        data=sys.argv[2],
        content_type="application/json",
        headers={"Authorization": f"Bearer {os.environ['ADMIN_TOKEN']}"},
    )
    raise SystemExit("the crash point was never reached")
