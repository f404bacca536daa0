"""`POST /events` through the API: the body checked as a message's is (422 naming each bad
field, a `category` that names no category or one whose gates cannot be read among them),
then notified once (events.notify)."""

from __future__ import annotations

from typing import Any

from composer.categories import check_category_exists, refuse_category
from composer.models import EventBody
from composer.teams_destination import check_installed
from composer.validation import Problems, check_category_id, check_recipient, check_text
from core.errors import DocumentError, ValidationFailed
from core.models import event_id
from core.platform import TEAMS
from core.runtime import Runtime
from core.store import EVENTS
from events.notify import EventDraft, notify


def post_event(rt: Runtime, body: EventBody) -> tuple[dict[str, Any], int]:
    """201 with the first caller's outcome, 200 for a duplicate."""
    problems = Problems()
    if not body.key.strip():
        problems.add("key", "must not be blank")
    platform = check_recipient(problems, body.channel, body.user, body.teams_conversation)
    if platform == TEAMS and body.user is not None:
        problems.add("user", "an event on Teams names its teams_conversation only")
    check_text(problems, "text", body.text, platform)
    check_category_id(problems, body.category, platform)
    problems.raise_if_any()
    _check_category(rt, body)
    if not rt.db.collection(EVENTS).document(event_id(body.key)).get().exists:
        check_installed(rt.db, body.teams_conversation)  # a later caller is told `duplicate`
    draft = EventDraft(
        body.key, body.text, body.channel, body.user, body.category, body.teams_conversation
    )
    try:
        notified = notify(rt, draft)
    except DocumentError as exc:  # its category was broken since the check: nothing claimed
        refuse_category(f"{body.category!r} cannot be used as stored: {exc.message}")
    return notified.to_json(), 200 if notified.duplicate else 201


def _check_category(rt: Runtime, body: EventBody) -> None:
    """A first caller's category must exist and be readable (422); a later caller of an event
    whose category has gone since is still told `duplicate`, as every later caller is."""
    try:
        check_category_exists(rt.db, body.category)
    except ValidationFailed:
        if not rt.db.collection(EVENTS).document(event_id(body.key)).get().exists:
            raise
