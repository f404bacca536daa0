"""`categories/{id}`: what kind of message a message is, for people's preferences and gates
(CONTRACT.md). Written by operators; read by the preferences API and the gates."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from core.errors import DocumentError


class CategoryField(enum.StrEnum):
    LABEL = "label"  # shown to people in their preferences
    # 0 (default): exempt both ways. N > 0: not sent within N hours after another
    # quiet-window message to the same person, and once sent opens that window.
    QUIET_WINDOW_HOURS = "quiet_window_hours"
    DAILY_CAP = "daily_cap"  # optional: per person, per local day of the message's timezone
    OPT_OUT_ALLOWED = "opt_out_allowed"  # default true; false for must-read categories


# The longest quiet window a category may ask for: a year (a window's end stays a datetime).
MAX_QUIET_WINDOW_HOURS = 366 * 24


def quiet_window_hours(data: Mapping[str, Any]) -> float:
    """A stored category's `quiet_window_hours`: absent or null is 0 (exempt), and so is a
    number up to 0; a number above 0 is the window. Anything else (NaN, Infinity, a number
    above MAX_QUIET_WINDOW_HOURS, a string...) makes the category unreadable: DocumentError
    `invalid_category`, so that a send of it ends `failed` with that code, never sent with
    its gates guessed."""
    hours = data.get(CategoryField.QUIET_WINDOW_HOURS)
    if hours is None:
        return 0.0
    number = isinstance(hours, int | float) and not isinstance(hours, bool)
    if not number or not hours <= MAX_QUIET_WINDOW_HOURS:  # NaN is not <= anything
        shown = repr(hours)[:80]
        raise DocumentError(
            "invalid_category",
            f"the category's {CategoryField.QUIET_WINDOW_HOURS} {shown} is not a number of "
            f"hours from 0 to {MAX_QUIET_WINDOW_HOURS}",
        )
    return max(float(hours), 0.0)


def unknown_category(category_id: str) -> DocumentError:
    """DocumentError `unknown_category`: no `categories` document has this id (never
    written, or deleted since the message or event was written), so a person's gates for it
    cannot be known, and a send of it to a person ends `failed` rather than sent with
    defaults guessed."""
    return DocumentError(
        "unknown_category",
        f"category {category_id[:80]!r} names no categories document: the person's gates "
        "for it cannot be known",
    )


def known_category(category_id: str, data: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """A send's category as its gates read it (`data`; None: no such document), else
    DocumentError `unknown_category`."""
    if data is None:
        raise unknown_category(category_id)
    return data


def check_category(data: Mapping[str, Any]) -> None:
    """DocumentError `invalid_category` when the gates cannot read a stored category."""
    quiet_window_hours(data)
