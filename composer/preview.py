"""`POST /preview`: what a draft would post and when, from the same code the send uses;
nothing is written."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from composer.answers import MessagePreview, Occurrence
from composer.models import MessageDraft
from composer.serialize import dump
from composer.validation import (
    Problems,
    add_schedule_problem,
    check_message,
    schedule_fields,
    stored_actions,
)
from core.errors import DocumentError
from core.schedule import upcoming
from formatting.buttons import with_actions
from formatting.slack_text import to_slack

PREVIEW_DELIVERY = "preview"

DEFAULT_COUNT = 5
MAX_COUNT = 50


class CountQuery(BaseModel):
    """The previews' query parameter: how many occurrences or turns."""

    count: int = Field(DEFAULT_COUNT, ge=1, le=MAX_COUNT)


def preview_message(draft: MessageDraft, now: datetime, count: int) -> dict[str, Any]:
    """The Slack text and blocks of `draft` and its next `count` occurrences (a one-off has
    its one). The draft must be valid as it would be for a create (422 otherwise)."""
    check_message(draft, now, schedule_from_now=True)
    rendered = to_slack(draft.text, allow_broadcast=draft.allow_broadcast)
    # The buttons as posted; a preview has no delivery yet, so their values name "preview".
    rendered = with_actions(rendered, PREVIEW_DELIVERY, stored_actions(draft))
    try:
        occurrences = upcoming(schedule_fields(draft), now, count)
    except DocumentError as exc:  # e.g. later occurrences past the evaluation's budget
        problems = Problems()
        add_schedule_problem(problems, exc)
        problems.raise_if_any()
        raise
    preview = MessagePreview(
        text=rendered.text,
        blocks=rendered.blocks or [],
        occurrences=[Occurrence(utc=when.utc, local=when.local) for when in occurrences],
    )
    return dump(preview)
