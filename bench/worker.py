"""One benchmark worker process:

    python -m bench.worker CONFIG_JSON

It builds the product's runtime with a counted Firestore client, says it is ready, waits
for the common start signal (so process start-up is not measured), runs its contender and
writes what it did and the RPCs it made to the result file named in the config."""

from __future__ import annotations

import json
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from bench import cpu
from bench.contenders import run_floor, run_ours, run_people, run_seed_style, run_shares
from bench.pubsub_roles import run_deliver, run_tick_publish
from bench.rpc import CountedClient, RpcCounter
from bench.tick_roles import run_count, run_ticks
from core.clock import SystemClock
from core.runtime import Runtime, new_worker_id, teams_for
from core.settings import Settings
from core.slack import SlackTransport


def build_runtime(counter: RpcCounter) -> Runtime:
    """The product's runtime on a counted client: the Teams transport too when TEAMS_APP_ID
    is set (a Teams run), its `teams_conversations` reads counted with the rest."""
    settings = Settings.from_env()
    db = CountedClient(settings.project, counter)
    clock = SystemClock()
    return Runtime(
        settings=settings,
        db=db,
        slack=SlackTransport(
            token=settings.slack_bot_token or "xoxb-bench",
            base_url=settings.slack_api_url,
            timeout_seconds=settings.slack_timeout_seconds,
        ),
        clock=clock,
        worker_id=new_worker_id(),
        teams=teams_for(settings, db, clock),
    )


def main(config: dict[str, Any]) -> None:
    counter = RpcCounter()
    rt = build_runtime(counter)
    # Open the gRPC channel before the start signal; the warm-up read is not counted.
    list(rt.db.collection("bench_warmup").limit(1).stream())
    if config["mode"] in ("deliver", "count"):
        # A function instance already running: its modules are loaded before the start.
        import functions_framework  # noqa: F401
        import google.cloud.pubsub_v1  # noqa: F401

        import main as _  # noqa: F401
    counter.reset()
    Path(config["ready"]).touch()
    go = Path(config["go"])
    while not go.exists():
        time.sleep(0.005)
    started, cpu_started = time.time(), cpu.own_seconds()
    deadline = started + float(config["cap_seconds"])
    mode = config["mode"]
    totals: dict[str, Any]
    if mode == "ours":
        totals = run_ours(rt, deadline)
    elif mode == "shares":
        totals = run_shares(rt, deadline, index=config["index"], workers=config["workers"])
    elif mode == "people":
        totals = run_people(rt, deadline)
    elif mode == "seed":
        totals = run_seed_style(rt, deadline)
    elif mode == "floor":
        totals = run_floor(
            rt,
            deadline,
            index=config["index"],
            workers=config["workers"],
            count=config["count"],
            channels=config["channels"],
            prefix=config["prefix"],
            due=datetime.fromisoformat(config["due"]),
            threads=config["threads"],
        )
    elif mode == "tick":
        totals = run_tick_publish(rt)
    elif mode == "ticks":
        totals = run_ticks(rt, deadline, stop=config["stop"], tick_every=config["tick_every"])
    elif mode == "count":
        totals = run_count(
            rt,
            deadline,
            subscription=config["subscription"],
            count=config["count"],
            token=rt.settings.admin_token or "",
            threads=config["threads"],
        )
    elif mode == "deliver":
        totals = run_deliver(
            rt,
            deadline,
            subscription=config["subscription"],
            stop=config["stop"],
            threads=config["threads"],
            token=rt.settings.admin_token or "",
        )
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    # A subscriber ends when told to: its work ended with the last message it handled.
    ended_at = totals.pop("ended_at", None)
    tick_starts = totals.pop("tick_starts", None)
    ended = time.time() if ended_at is None else max(ended_at, started)
    result = {
        "mode": mode,
        "started": started,
        "ended": ended,
        "capped": time.time() >= deadline,
        "totals": totals,
        **({"tick_starts": tick_starts} if tick_starts is not None else {}),
        "rpcs": counter.snapshot(),
        "cpu_seconds": cpu.own_seconds() - cpu_started,
    }
    Path(config["result"]).write_text(json.dumps(result))


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
