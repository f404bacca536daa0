"""`/schedule` and "Schedule a copy": the modal that schedules a message for the conversation
it was opened from, and its submission.

Opening: `views.open` with the request's trigger_id, at once (it lives 3 s), after reading
the person's zone (users.info) and the categories. A trigger Slack refuses (expired, used)
is told to the person through the request's response_url.

Submitting: the modal's values become the body `POST /messages` takes
(interactions.schedule_form) and go through the same model and validation
(composer.validation, composer.messages.create_message), with `created_by` the Slack user.
A 422 answers `response_action: errors`, each problem under its input; nothing is stored.
Success closes the modal (`clear`) and tells the person, in a message only they see in the
conversation, when it goes out (core.schedule_words)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import flask
from google.api_core.exceptions import AlreadyExists, FailedPrecondition

from composer.idempotency import Fresh, Replay, look_up
from composer.messages import create_message
from composer.models import MessageDraft
from core import logs
from core.documents.categories import CategoryField
from core.errors import ValidationFailed
from core.http import parse_json
from core.runtime import Runtime
from core.schedule_words import draft_schedule_text, moment_text
from core.store import CATEGORIES
from interactions.acknowledge import json_answer, ok
from interactions.inbound import Inbound
from interactions.reply import reply_ephemeral
from interactions.schedule_form import draft_of, errors_of
from interactions.schedule_view import (
    CALLBACK_ID,
    Prefill,
    conversation_of,
    first_day,
    schedule_view,
)
from interactions.slack_web import SlackRefused, call, post_ephemeral, timezone_of

SHORTCUT_CALLBACK_ID = "schedule_copy"
# What a view's idempotency key is recorded for (composer.idempotency's `route`).
_ROUTE = "slack view_submission schedule_message"
_MAX_CATEGORIES = 100


def open_modal(
    rt: Runtime,
    *,
    trigger_id: str,
    user: str,
    conversation: str,
    response_url: str | None,
    text: dict[str, Any] | None = None,
) -> bool:
    """Opens the modal for `conversation`; whether Slack took it (the person is told when
    not)."""
    timezone = timezone_of(rt, user) or "UTC"
    prefill = Prefill(
        conversation=conversation,
        timezone=timezone,
        first_day=first_day(rt.clock.now().astimezone(_zone(timezone))),
        categories=_categories(rt),
        text=text,
    )
    view = schedule_view(prefill)
    try:
        call(rt, lambda slack: slack.views_open(trigger_id=trigger_id, view=view))
    except SlackRefused as exc:
        logs.warning("schedule modal not opened", user=user, error_code=exc.code)
        reply_ephemeral(
            rt,
            response_url,
            "Slack did not open the scheduling form in time"
            f" ({exc.code}). Please type the command again.",
        )
        return False
    logs.info("schedule modal opened", user=user, channel=conversation)
    return True


def take_shortcut(rt: Runtime, inbound: Inbound) -> flask.Response:
    """ "Schedule a copy" on a message: the modal, filled with that message's text."""
    fields = inbound.fields
    if fields.get("callback_id") != SHORTCUT_CALLBACK_ID:
        logs.info("shortcut ignored", reason="not ours", callback_id=fields.get("callback_id"))
        return ok()
    user, channel = _id(fields.get("user")), _id(fields.get("channel"))
    trigger_id = fields.get("trigger_id")
    if user is None or channel is None or not isinstance(trigger_id, str):
        logs.warning("shortcut ignored", reason="malformed")
        return ok()
    message = fields.get("message")
    open_modal(
        rt,
        trigger_id=trigger_id,
        user=user,
        conversation=channel,
        response_url=_str(fields.get("response_url")),
        text=copied_text(message if isinstance(message, dict) else {}),
    )
    return ok()


def copied_text(message: dict[str, Any]) -> dict[str, Any]:
    """A message's text as the modal's rich_text: its own `rich_text` block when it has one
    (what a person typed, formatting kept), its `text` as plain text otherwise."""
    for block in message.get("blocks") or []:
        if isinstance(block, dict) and block.get("type") == "rich_text":
            return {"type": "rich_text", "elements": block.get("elements") or []}
    text = str(message.get("text") or "")
    section = {"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}
    return {"type": "rich_text", "elements": [section]}


def take_submission(rt: Runtime, inbound: Inbound) -> flask.Response:
    view = inbound.fields.get("view")
    if not isinstance(view, dict) or view.get("callback_id") != CALLBACK_ID:
        logs.info("view submission ignored", reason="not ours")
        return ok()
    user, conversation = _id(inbound.fields.get("user")), conversation_of(view)
    values = (view.get("state") or {}).get("values")
    if user is None or conversation is None or not isinstance(values, dict):
        logs.warning("view submission ignored", reason="malformed")
        return ok()
    body = draft_of(values, conversation)
    try:
        fresh = _first_submission(rt, view, body)
        if fresh is None:
            logs.info("schedule modal submitted again; already scheduled", user=user)
            return json_answer({"response_action": "clear"})
        draft = parse_json(json.dumps(body), MessageDraft)
        created = create_message(rt, draft, fresh, by=user)
    except (AlreadyExists, FailedPrecondition):  # the same view's concurrent submission won
        return json_answer({"response_action": "clear"})
    except ValidationFailed as exc:
        blocks = {b.get("block_id") for b in view.get("blocks") or [] if isinstance(b, dict)}
        errors = errors_of(exc.details, {b for b in blocks if isinstance(b, str)})
        logs.info("schedule modal refused", user=user, fields=sorted(errors))
        return json_answer({"response_action": "errors", "errors": errors})
    post_ephemeral(rt, conversation, user, confirmation(created))
    return json_answer({"response_action": "clear"})


def _first_submission(rt: Runtime, view: dict[str, Any], body: dict[str, Any]) -> Fresh | None:
    """The view's id is the submission's idempotency key (composer.idempotency, as an API
    create's `Idempotency-Key`): Slack may deliver a submission again, and a person may submit
    again when the first answer came after Slack's 3 s, so a view schedules one message at
    most. None: this view already did."""
    view_id = view.get("id")
    if not isinstance(view_id, str) or not view_id:
        raise ValidationFailed("the view has no id", [{"field": "view", "message": "no id"}])
    found = look_up(rt.db, f"slack-view:{view_id}", _ROUTE, body, rt.clock.now())
    return None if isinstance(found, Replay) else found


def confirmation(message: dict[str, Any]) -> str:
    """Scheduled: Once on Tue 8 Dec 2026 at 14:00 (Europe/Berlin). — and for a series, when
    its first one goes out."""
    words = draft_schedule_text(message) or "as asked"
    said = f"Scheduled for <#{message.get('channel')}>: {words}."
    next_run, timezone = message.get("next_run_at"), str(message.get("timezone") or "UTC")
    if message.get("rrule") and isinstance(next_run, str):
        said += (
            f" The first one goes out on {moment_text(datetime.fromisoformat(next_run), timezone)}."
        )
    return said


def _categories(rt: Runtime) -> list[tuple[str, str]]:
    found = rt.db.collection(CATEGORIES).limit(_MAX_CATEGORIES).stream()
    choices = []
    for snap in found:
        label = (snap.to_dict() or {}).get(CategoryField.LABEL)
        choices.append((snap.id, label if isinstance(label, str) and label else snap.id))
    return choices


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ValueError, KeyError, OSError):
        return ZoneInfo("UTC")


def _id(value: Any) -> str | None:
    found = value.get("id") if isinstance(value, dict) else None
    return found if isinstance(found, str) and found else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
