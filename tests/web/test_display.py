"""What the Messages list and a message's history say about time, in a real browser: which
time is which in the history (the message's zone, UTC when it has none, then the viewer's),
no "Next run" for a paused message, and no "Last due" in the future for a series cancelled
before it was ever due. The viewer is in New York (tests/web/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from google.cloud import firestore
from playwright.sync_api import Locator, Page, expect

from core.store import MESSAGES
from emulator.run_local import examples
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.messages import SERIES
from tests.fixtures.tick import answer, at, bearer, tick


def shown(open_page: Callable[..., Page], message_id: str) -> Locator:
    """A new tab, opened once the message exists: the list the section loads as it opens
    shows it (no second load to race with)."""
    row = open_page().locator(f'li.message[data-id="{message_id}"]')
    expect(row).to_be_visible()
    return row


def test_the_history_says_which_time_is_utc_and_which_is_yours(
    open_page: Callable[..., Page], api: Any, db: firestore.Client, tick_app: Any
) -> None:
    """`make run`'s welcome message is stored without a timezone: it runs in UTC."""
    welcome = examples(T0, "C0123ABCD")["example-welcome"]
    written = replace(welcome, created_at=T0, updated_at=T0, version=1)
    db.collection(MESSAGES).document("example-welcome").set(written.to_document())
    assert "timezone" not in call(api, "GET", "/messages/example-welcome")[1]
    assert answer(tick(tick_app.test_client(), headers=bearer(), body=at(T0)), 200)["sent"] == 1
    row = shown(open_page, "example-welcome")
    row.get_by_role("button", name="History").click()

    table = row.locator("table.history")
    expect(table.locator("caption")).to_have_text(
        "Delivery history: each occurrence first in UTC (the message's timezone), "
        "then in yours (America/New_York)"
    )
    # 09:00 UTC is 04:00 in New York: the first line is UTC, the second the viewer's.
    expect(table.locator('tbody [data-label="Occurrence"]')).to_have_text(
        "4 Jan 2027, 09:00 UTCyours: 4 Jan 2027, 04:00 GMT-5"
    )


def test_a_paused_series_shows_paused_and_no_next_run(
    open_page: Callable[..., Page], api: Any
) -> None:
    _, created = call(api, "POST", "/messages", SERIES)
    status, paused = call(
        api, "POST", f"/messages/{created['id']}/pause", headers={"If-Match": "1"}
    )
    assert status == 200, paused

    row = shown(open_page, created["id"])

    expect(row.locator(".status")).to_have_text("paused")
    expect(row.locator("dl")).to_contain_text("Pausednothing is sent until it is resumed")
    expect(row.locator("dl")).not_to_contain_text("Next run")


def test_a_series_cancelled_before_it_was_due_shows_no_last_due(
    open_page: Callable[..., Page], api: Any
) -> None:
    _, created = call(api, "POST", "/messages", SERIES)  # first due on Wednesday
    status, _ = call(api, "DELETE", f"/messages/{created['id']}", headers={"If-Match": "1"})
    assert status == 200

    row = shown(open_page, created["id"])

    expect(row.locator(".status")).to_have_text("cancelled")
    expect(row.locator("dl")).to_contain_text("Schedule")
    expect(row.locator("dl")).not_to_contain_text("Last due")
    expect(row.locator("dl")).not_to_contain_text("Next run")
