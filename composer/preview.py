"""`POST /preview`: what a draft would post and when, from the same code the send uses;
nothing is written."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from composer.answers import MessagePreview, Occurrence
from composer.categories import check_category_exists, refuse_category
from composer.models import MessageDraft
from composer.serialize import dump
from composer.teams_destination import check_installed
from composer.validation import (
    Problems,
    add_schedule_problem,
    check_message,
    schedule_fields,
    stored_actions,
)
from core.actions import Action
from core.errors import DocumentError
from core.models import Message, message_delivery_id
from core.platform import SLACK, TEAMS
from core.runtime import Runtime
from core.schedule import upcoming
from core.schedule_words import draft_schedule_text
from core.store import CATEGORIES
from formatting.render import Rendered, render, with_actions
from formatting.teams_message import TeamsMessage
from messages.plan import with_mute
from processor.gates import held_back, read_gates

DRAFT_ID = "draft"  # a draft's stand-in message id (its occurrences' delivery ids)
PREVIEW_DELIVERY = "preview"

DEFAULT_COUNT = 5
MAX_COUNT = 50


class CountQuery(BaseModel):
    """The previews' query parameter: how many occurrences or turns."""

    count: int = Field(DEFAULT_COUNT, ge=1, le=MAX_COUNT)


def preview_message(rt: Runtime, draft: MessageDraft, count: int) -> dict[str, Any]:
    """What `draft` posts on its platform (Slack's text and blocks, Teams' text and card)
    and its next `count` occurrences (a one-off has its one), each with the gate that would
    hold it back (a message to a person with a category). The draft must be valid as it
    would be for a create (422 otherwise)."""
    now = rt.clock.now()
    check_message(draft, now, schedule_from_now=True)
    check_category_exists(rt.db, draft.category)
    check_installed(rt.db, draft.teams_conversation, draft.user)
    platform = SLACK if draft.teams_conversation is None else TEAMS
    rendered = render(platform, draft.text, allow_broadcast=draft.allow_broadcast)
    # The buttons as posted; a preview has no delivery yet, so their values name "preview".
    rendered = with_actions(rendered, PREVIEW_DELIVERY, _buttons(rt, draft, platform))
    try:
        occurrences = upcoming(schedule_fields(draft), now, count)
    except DocumentError as exc:  # e.g. later occurrences past the evaluation's budget
        problems = Problems()
        add_schedule_problem(problems, exc)
        problems.raise_if_any()
        raise
    preview = MessagePreview(
        **posted(rendered),
        occurrences=[
            Occurrence(utc=when.utc, local=when.local, held_back=reason)
            for when, reason in zip(occurrences, _gates(rt, draft, occurrences), strict=True)
        ],
        schedule_text=draft_schedule_text(schedule_fields(draft)),
    )
    return dump(preview)


def posted(rendered: Rendered) -> dict[str, Any]:
    """A post as a preview answers it: its text, and Slack's blocks or Teams' card."""
    if isinstance(rendered, TeamsMessage):
        return {"text": rendered.text, "blocks": [], "card": rendered.card}
    return {"text": rendered.text, "blocks": rendered.blocks or []}


def _buttons(rt: Runtime, draft: MessageDraft, platform: str) -> tuple[Action, ...]:
    """The buttons the post would carry: the draft's own, and the reserved mute button when
    its claim would add it (messages.plan.with_mute) on the category as it is now."""
    message = Message(
        DRAFT_ID,
        draft.teams_conversation,
        draft.text,
        draft.timezone,
        None,
        0,
        allow_broadcast=draft.allow_broadcast,
        user=draft.user,
        category=draft.category,
        actions=stored_actions(draft.actions),
        platform=platform,
    )
    if draft.category is None or draft.user is None:
        return message.actions
    category = rt.db.collection(CATEGORIES).document(draft.category).get().to_dict()
    return with_mute(message, category).actions


def _gates(rt: Runtime, draft: MessageDraft, occurrences: list[Any]) -> list[str | None]:
    """Per occurrence, the gate that would hold it back (processor.gates.held_back, the
    claim's own function, on the documents it would read), each claim run at its occurrence
    and the sends before it played forward as their claims would reserve them."""
    if draft.user is None or draft.category is None:
        return [None] * len(occurrences)
    message = Message(
        DRAFT_ID,
        None,
        draft.text,
        draft.timezone,
        None,
        0,
        user=draft.user,
        category=draft.category,
    )
    gates = read_gates(rt.db, [message])
    reasons = []
    for when in occurrences:
        delivery_id = message_delivery_id(DRAFT_ID, when.utc)
        try:
            reason = held_back(message, when.utc, delivery_id, gates.docs(message), when.utc)
        except DocumentError as exc:  # its category was broken since the check
            refuse_category(f"{draft.category!r} cannot be used as stored: {exc.message}")
        if reason is None:
            gates.assume_sent(message, when.utc, delivery_id, when.utc)
        reasons.append(reason)
    return reasons
