"""web/time.js in the browser: a local wall clock in a named timezone becomes the instant
Python's zoneinfo gives it (fold=0), across clock changes and odd offsets, and back."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from playwright.sync_api import Page

CASES = [
    ("2027-01-04T12:30", "Europe/Berlin"),
    ("2027-07-01T09:00", "Europe/Berlin"),
    ("2027-03-28T02:30", "Europe/Berlin"),  # skipped: spring forward
    ("2027-10-31T02:30", "Europe/Berlin"),  # twice: fall back, the first
    ("2027-03-14T02:15", "America/New_York"),
    ("2027-11-07T01:30", "America/New_York"),
    ("2027-06-01T08:45", "Asia/Kolkata"),
    ("2027-04-04T02:30", "Australia/Lord_Howe"),  # a half-hour clock change
    ("2027-01-01T00:00", "UTC"),
]


def test_a_wall_clock_becomes_the_instant_zoneinfo_gives(page: Page) -> None:
    for local, zone in CASES:
        check(page, local, zone)


def check(page: Page, local: str, zone: str) -> None:
    iso = page.evaluate(
        "([local, zone]) => import('./static/time.js').then((t) => t.zonedIso(local, zone))",
        [local, zone],
    )
    expected = datetime.fromisoformat(local).replace(tzinfo=ZoneInfo(zone))
    # As instants: aware datetimes in a gap or fold never compare equal across zones.
    assert datetime.fromisoformat(iso).timestamp() == expected.timestamp()
    back = page.evaluate(
        "([iso, zone]) => import('./static/time.js').then((t) => t.wallClock(iso, zone))",
        [iso, zone],
    )
    # A skipped time reads back as the time it became (02:30 → 03:30).
    shown = datetime.fromtimestamp(expected.timestamp(), ZoneInfo(zone))
    assert back == shown.strftime("%Y-%m-%dT%H:%M")
