"""`/schedule list`: the person's messages still to go out (those they created, waiting for
their next run), soonest first, each with its conversation, its next run and its schedule
in words. One bounded query on the index (status, created_by, next_run_at)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from google.cloud.firestore_v1.base_query import FieldFilter

from core.documents.messages import WAITING, MessageField
from core.runtime import Runtime
from core.schedule_words import draft_schedule_text, moment_text
from core.store import MESSAGES

SHOWN = 20  # Slack shows a command's answer as one message; the page lists them all
_PREVIEW = 60


def upcoming_text(rt: Runtime, user: str) -> str:
    found = (
        rt.db.collection(MESSAGES)
        .where(filter=FieldFilter(MessageField.CREATED_BY, "==", user))
        .where(filter=FieldFilter(MessageField.STATUS, "in", [s.value for s in WAITING]))
        .order_by(MessageField.NEXT_RUN_AT)
        .limit(SHOWN + 1)
        .stream()
    )
    waiting = [d for d in (snap.to_dict() or {} for snap in found) if _next_run(d) is not None]
    if not waiting:
        return "You have no scheduled messages still to go out. Type */schedule* to add one."
    if len(waiting) > SHOWN:
        lines = [f"Your next {SHOWN} scheduled messages (the page lists them all):"]
    else:
        lines = [f"Your scheduled messages ({len(waiting)}):"]
    lines += [_line(data) for data in waiting[:SHOWN]]
    return "\n".join(lines)


def _line(data: dict[str, Any]) -> str:
    text = " ".join(str(data.get(MessageField.TEXT) or "").split())
    preview = text if len(text) <= _PREVIEW else text[: _PREVIEW - 1] + "…"
    timezone = str(data.get(MessageField.TIMEZONE) or "UTC")
    next_run = _next_run(data)
    when = moment_text(next_run, timezone) if next_run is not None else "not scheduled"
    where = data.get(MessageField.CHANNEL) or data.get(MessageField.USER)
    target = f"<#{where}>" if data.get(MessageField.CHANNEL) else f"<@{where}>"
    words = draft_schedule_text(data) or ""
    return f"• {target} next on {when}: “{preview}” ({words})"


def _next_run(data: dict[str, Any]) -> datetime | None:
    value = data.get(MessageField.NEXT_RUN_AT)
    return value if isinstance(value, datetime) else None
