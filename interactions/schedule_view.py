"""The `/schedule` modal (`callback_id: "schedule_message"`): its blocks, and the
conversation it schedules for, carried in `private_metadata`.

Each input is its own block, named by a block id that interactions.schedule_form reads
back and that a 422's field is shown under. The recurrence choices are the composer's
(web/recurrence.js): once, daily, weekdays, weekly on the ticked days, monthly on the
date's day or on its nth weekday, yearly; the date and time are Slack's pickers, read in
the timezone field (the person's own zone, from users.info, unless they change it)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

CALLBACK_ID = "schedule_message"

MESSAGE = "message"
RECURRENCE = "recurrence"
DATE = "date"
TIME = "time"
DAYS = "days"
TIMEZONE = "timezone"
CATEGORY = "category"

ONCE = "once"
RECURRENCES = (
    (ONCE, "Once"),
    ("daily", "Daily"),
    ("weekdays", "Every weekday (Monday to Friday)"),
    ("weekly", "Weekly, on the days ticked below"),
    ("monthly_day", "Monthly, on the date's day of the month"),
    ("monthly_weekday", "Monthly, on the date's weekday (e.g. the 2nd Tuesday)"),
    ("yearly", "Yearly, on the date"),
)
WEEKDAYS = (
    ("MO", "Monday"),
    ("TU", "Tuesday"),
    ("WE", "Wednesday"),
    ("TH", "Thursday"),
    ("FR", "Friday"),
    ("SA", "Saturday"),
    ("SU", "Sunday"),
)
DEFAULT_TIME = "09:00"


def first_day(now: datetime) -> date:
    """The date the picker starts at: today where the person is, tomorrow once DEFAULT_TIME
    has passed there, so the modal's defaults make a time still ahead."""
    hour, minute = (int(part) for part in DEFAULT_TIME.split(":"))
    past = (now.hour, now.minute) >= (hour, minute)
    return now.date() + timedelta(days=1) if past else now.date()


_MAX_OPTIONS = 100  # Slack's limit for a static_select


@dataclass(frozen=True)
class Prefill:
    """What the modal opens with: the conversation, the person's zone and the date its
    picker starts at (first_day), the categories to offer (id, label), and a message to
    copy (a rich_text object)."""

    conversation: str
    timezone: str
    first_day: date
    categories: list[tuple[str, str]]
    text: dict[str, Any] | None = None


def schedule_view(prefill: Prefill) -> dict[str, Any]:
    blocks = [
        _message_block(prefill.text),
        _input(RECURRENCE, "How often", _select(RECURRENCES, ONCE)),
        _input(DATE, "Date", {"type": "datepicker", "initial_date": prefill.first_day.isoformat()}),
        _input(TIME, "Time", {"type": "timepicker", "initial_time": DEFAULT_TIME}),
        _input(DAYS, "Days (weekly)", _days(), optional=True),
        _input(
            TIMEZONE,
            "Time zone",
            {"type": "plain_text_input", "initial_value": prefill.timezone},
            hint="An IANA zone such as Europe/Berlin; the date and time are read in it.",
        ),
    ]
    if prefill.categories:
        choices = tuple(prefill.categories[:_MAX_OPTIONS])
        blocks.append(_input(CATEGORY, "Category", _select(choices, None), optional=True))
    return {
        "type": "modal",
        "callback_id": CALLBACK_ID,
        "private_metadata": json.dumps({"conversation": prefill.conversation}),
        "title": _plain("Schedule a message"),
        "submit": _plain("Schedule"),
        "close": _plain("Cancel"),
        "blocks": blocks,
    }


def conversation_of(view: dict[str, Any]) -> str | None:
    """The conversation a submitted modal schedules for (its `private_metadata`)."""
    try:
        metadata = json.loads(str(view.get("private_metadata") or ""))
    except ValueError:
        return None
    conversation = metadata.get("conversation") if isinstance(metadata, dict) else None
    return conversation if isinstance(conversation, str) else None


def _message_block(text: dict[str, Any] | None) -> dict[str, Any]:
    element: dict[str, Any] = {"type": "rich_text_input", "focus_on_load": True}
    if text is not None:
        element["initial_value"] = text
    return _input(MESSAGE, "Message", element)


def _days() -> dict[str, Any]:
    return {"type": "checkboxes", "options": [_option(code, name) for code, name in WEEKDAYS]}


def _select(choices: tuple[tuple[str, str], ...], initial: str | None) -> dict[str, Any]:
    options = [_option(value, label) for value, label in choices]
    element: dict[str, Any] = {"type": "static_select", "options": options}
    if initial is not None:
        element["initial_option"] = next(o for o in options if o["value"] == initial)
    return element


def _input(
    block_id: str,
    label: str,
    element: dict[str, Any],
    *,
    optional: bool = False,
    hint: str | None = None,
) -> dict[str, Any]:
    block = {
        "type": "input",
        "block_id": block_id,
        "label": _plain(label),
        "element": {**element, "action_id": block_id},
        "optional": optional,
    }
    if hint is not None:
        block["hint"] = _plain(hint)
    return block


def _option(value: str, label: str) -> dict[str, Any]:
    return {"text": _plain(label[:75]), "value": value}


def _plain(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text}
