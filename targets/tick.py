"""The `tick` HTTP target: the cron gate, the request body, and one processing pass over
rotations (few, and due at a fixed local time) and then messages."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import flask
from pydantic import BaseModel, ConfigDict

from core.clock import FixedClock
from core.directory_refresh import refresh_lists
from core.errors import BadRequest, MethodNotAllowed
from core.http import Instant, parse_body
from core.runtime import runtime_for
from core.settings import Settings
from targets.kinds import run_pass


class TickRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    dry_run: bool = False
    now: Instant | None = None


def handle_tick(request: flask.Request, settings: Settings) -> tuple[dict[str, Any], int]:
    if request.method != "POST":
        raise MethodNotAllowed(f"tick takes POST, not {request.method}", ["POST"])
    # Copied environments share the scheduler's job definitions; only production's cron
    # may act. A person or service calling without the header still runs anywhere.
    if request.headers.get("X-CloudScheduler", "").lower() == "true" and not settings.is_production:
        return {"skipped": "non-production cron"}, 200
    body = parse_body(request, TickRequest, optional=True)
    rt = runtime_for(settings)
    if body.now is not None:
        if settings.is_production:
            raise BadRequest("`now` cannot be overridden in production")
        rt = rt.with_clock(FixedClock(datetime.fromisoformat(body.now.isoformat())))
    counts = run_pass(rt, dry_run=body.dry_run)
    if not body.dry_run:
        # After the sends: a bounded step of the names cache (core.directory_refresh).
        refresh_lists(rt.db, rt.clock, rt.settings, rt.worker_id)
    return counts, 200
