"""conversations.history's paging in the Slack stand-in: limits, cursors and short pages.

Slack's cursors for history are base64 of "next_ts:<ts>" (the spec's example cursor decodes
so); a page holds at most `limit` messages (default 100, at most 999), and "fewer than the
requested number of items may be returned, even if the end of the conversation history hasn't
been reached" (conversations.history reference). Since 2025 the maximum and default `limit`
for apps not approved for the Marketplace is 15 (api.slack.com/changelog/
2025-05-terms-rate-limit-update-and-faq): `page_max`.
"""

from __future__ import annotations

import base64
import binascii
from decimal import Decimal, InvalidOperation
from typing import Any

from emulator.slack_limits import SlackError

DEFAULT_LIMIT = 100
MAX_LIMIT = 999
ONE_MICRO = Decimal("0.000001")


def ts_param(value: Any, error: str) -> Decimal | None:
    # Decimal, not float: bounds are exclusive, and a float can round a ts onto its neighbour.
    if value in (None, ""):
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        raise SlackError(error) from None


def page_size(value: Any, page_max: int | None) -> int:
    default = DEFAULT_LIMIT if page_max is None else min(page_max, DEFAULT_LIMIT)
    if value in (None, ""):
        return default
    try:
        limit = int(value)
    except (TypeError, ValueError):
        raise SlackError("invalid_limit") from None
    limit = default if limit <= 0 else min(limit, MAX_LIMIT)
    return limit if page_max is None else min(limit, page_max)


def short_page_size(page_number: int, size: int) -> int:
    """Short pages, deterministically: half a page, then an empty one, then a full one."""
    return (max(1, size // 2), 0, size)[(page_number - 1) % 3]


def encode_cursor(ts: Decimal, page_number: int | None) -> str:
    """Slack's form, base64 of "next_ts:<ts in microseconds>": the next page holds messages
    older than ts. Only for short pages a ":<page number>" follows, which decides how short
    the next page is. Cursors hold no server state, so they work however late they are used."""
    raw = f"next_ts:{int(ts / ONE_MICRO)}" + ("" if page_number is None else f":{page_number}")
    return base64.b64encode(raw.encode()).decode()


def decode_cursor(value: Any) -> tuple[Decimal | None, int]:
    if value in (None, ""):
        return None, 1
    try:
        raw = base64.b64decode(str(value), validate=True).decode()
        prefix, ts, *page = raw.split(":")
        if prefix != "next_ts" or len(page) > 1 or not ts.isdigit():
            raise ValueError(raw)
        return Decimal(ts) * ONE_MICRO, int(page[0]) if page else 2
    except (binascii.Error, UnicodeDecodeError, ValueError, InvalidOperation):
        raise SlackError("invalid_cursor") from None
