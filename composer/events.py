"""`POST /events` through the API: the body checked as a message's is (422 naming each bad
field), then notified once (events.notify)."""

from __future__ import annotations

from typing import Any

from composer.models import EventBody
from composer.validation import Problems, check_recipient, check_text
from core.runtime import Runtime
from events.notify import EventDraft, notify


def post_event(rt: Runtime, body: EventBody) -> tuple[dict[str, Any], int]:
    """201 with the first caller's outcome, 200 for a duplicate."""
    problems = Problems()
    if not body.key.strip():
        problems.add("key", "must not be blank")
    check_recipient(problems, body.channel, body.user)
    check_text(problems, "text", body.text)
    problems.raise_if_any()
    draft = EventDraft(body.key, body.text, body.channel, body.user, body.category)
    notified = notify(rt, draft)
    return notified.to_json(), 200 if notified.duplicate else 201
