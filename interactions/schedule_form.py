"""A submitted `/schedule` modal as the body `POST /messages` would take, and a 422's fields
as the modal's blocks, so the person sees each problem under the input it is about.

The draft is built as the composer builds it (web/recurrence.js): a one-off's `send_at` is
the date and time in the chosen zone; a series' `rrule` carries the time as BYHOUR/BYMINUTE
and its `dtstart` is the local date and time. Nothing is checked here: composer.validation
decides, exactly as for the API."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from interactions.rich_text import plain_markdown, to_markdown
from interactions.schedule_view import (
    CATEGORY,
    DATE,
    DAYS,
    MESSAGE,
    ONCE,
    RECURRENCE,
    TIME,
    TIMEZONE,
    WEEKDAYS,
)

_WORKDAYS = "MO,TU,WE,TH,FR"
# Each field of a 422 under the block it is about; any other field under the message.
_BLOCK_OF_FIELD = {
    "text": MESSAGE,
    "send_at": DATE,
    "dtstart": DATE,
    "rrule": RECURRENCE,
    "timezone": TIMEZONE,
    "category": CATEGORY,
}
_MAX_ERROR = 150


def draft_of(values: dict[str, Any], conversation: str) -> dict[str, Any]:
    """The `POST /messages` body the modal's `state.values` describe."""
    zone = _value(values, TIMEZONE).strip() or "UTC"
    draft: dict[str, Any] = {
        "channel": conversation,
        "text": _text(values),
        "timezone": zone,
    }
    category = _selected(values, CATEGORY)
    if category:
        draft["category"] = category
    day, at = _value(values, DATE), _value(values, TIME)
    local = f"{day}T{at}" if day and at else ""
    choice = _selected(values, RECURRENCE) or ONCE
    if choice == ONCE:
        if local:
            draft["send_at"] = _instant(local, zone)
        return draft
    rule = _rule(choice, day, at, _ticked(values))
    if rule:
        draft["rrule"] = rule
    if local:
        draft["dtstart"] = local
    return draft


def errors_of(details: list[dict[str, Any]], blocks: set[str]) -> dict[str, str]:
    """`response_action: errors`' map: each detail under its field's block (one present in
    the view), several for one block joined."""
    said: dict[str, list[str]] = {}
    for detail in details:
        field = str(detail.get("field", ""))
        block = _BLOCK_OF_FIELD.get(field, MESSAGE)
        if block not in blocks:
            block = MESSAGE
        text = str(detail.get("message", ""))
        said.setdefault(block, []).append(
            text if block == _BLOCK_OF_FIELD.get(field) else f"{field}: {text}"
        )
    return {block: _short("; ".join(texts)) for block, texts in said.items()}


def _text(values: dict[str, Any]) -> str:
    element = _element(values, MESSAGE)
    rich = element.get("rich_text_value")
    if isinstance(rich, dict):
        return to_markdown(rich)
    return plain_markdown(str(element.get("value") or ""))


def _rule(choice: str, day: str, at: str, ticked: list[str]) -> str | None:
    hour, minute = (int(part) for part in at.split(":")) if at else (None, None)
    suffix = f";BYHOUR={hour};BYMINUTE={minute}" if at else ""
    start = _date(day)
    if choice == "daily":
        return f"FREQ=DAILY{suffix}"
    if choice == "weekdays":
        return f"FREQ=WEEKLY;BYDAY={_WORKDAYS}{suffix}"
    if choice == "weekly":  # no day ticked: the date's weekday (RFC 5545's default)
        return f"FREQ=WEEKLY{';BYDAY=' + ','.join(ticked) if ticked else ''}{suffix}"
    if start is None:
        return None  # the date is required; its problem is named under it
    if choice == "monthly_day":
        return f"FREQ=MONTHLY;BYMONTHDAY={start.day}{suffix}"
    if choice == "monthly_weekday":
        nth = (start.day - 1) // 7 + 1
        code = WEEKDAYS[start.weekday()][0]
        return f"FREQ=MONTHLY;BYDAY={-1 if nth == 5 else nth}{code}{suffix}"
    if choice == "yearly":
        return f"FREQ=YEARLY;BYMONTH={start.month};BYMONTHDAY={start.day}{suffix}"
    return None


def _instant(local: str, zone: str) -> str:
    """`local` in `zone` as ISO with its offset; an unknown zone as UTC, so the 422 names
    the timezone rather than the time."""
    try:
        tz = ZoneInfo(zone)
    except (ValueError, KeyError, OSError):
        return f"{local}:00Z"
    return datetime.fromisoformat(local).replace(tzinfo=tz).isoformat()


def _date(day: str) -> date | None:
    try:
        return date.fromisoformat(day)
    except ValueError:
        return None


def _ticked(values: dict[str, Any]) -> list[str]:
    options = _element(values, DAYS).get("selected_options")
    chosen = (
        {o.get("value") for o in options if isinstance(o, dict)}
        if isinstance(options, list)
        else set()
    )
    return [code for code, _ in WEEKDAYS if code in chosen]


def _selected(values: dict[str, Any], block: str) -> str | None:
    option = _element(values, block).get("selected_option")
    value = option.get("value") if isinstance(option, dict) else None
    return value if isinstance(value, str) else None


def _value(values: dict[str, Any], block: str) -> str:
    element = _element(values, block)
    for key in ("value", "selected_date", "selected_time"):
        if isinstance(element.get(key), str):
            return str(element[key])
    return ""


def _element(values: dict[str, Any], block: str) -> dict[str, Any]:
    entry = values.get(block)
    element = entry.get(block) if isinstance(entry, dict) else None
    return element if isinstance(element, dict) else {}


def _short(text: str) -> str:
    return text if len(text) <= _MAX_ERROR else text[: _MAX_ERROR - 1] + "…"
