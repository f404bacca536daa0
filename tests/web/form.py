"""Filling the message form's schedule the way a person does: the recurrence picker's
Repeat choice, its native date and time fields."""

from __future__ import annotations

from playwright.sync_api import Page


def fill_when(page: Page, local: str, repeat: str = "Once") -> None:
    """`local` is "YYYY-MM-DD HH:MM" in the form's timezone; `repeat` a Repeat choice."""
    date, time = local.split(" ")
    page.get_by_label("Repeat", exact=True).select_option(label=repeat)
    page.get_by_label("Date", exact=True).fill(date)
    page.get_by_label("Time", exact=True).fill(time)
