"""A message's answers in the page: its History shows who answered what (labels from the
catalog), newest first, in a real browser against the real `api` target."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from playwright.sync_api import Page, expect

from tests.fixtures.clock import T0
from tests.fixtures.interactions import click
from tests.interactions import conftest as interactions

# The `interactions` target's fixtures, shared with tests/interactions/.
interactions_app = interactions.interactions_app
clicks = interactions.clicks
posted = interactions.posted

BOB = "U0BOB0000"


def test_the_history_shows_the_answers(page: Page, clicks: Any, posted: Any, clock: Any) -> None:
    post = posted(text="Did you finish the plan?")
    click(clicks, post, "done", "U0ALICE00", T0)
    clock.advance(timedelta(minutes=1))
    click(clicks, post, "not-yet", BOB, clock.now())

    page.get_by_role("button", name="Show").click()
    row = page.locator("li.message").filter(has_text="Did you finish the plan?")
    row.get_by_role("button", name="History").click()

    answers = row.locator("table.answers tbody tr")
    expect(answers).to_have_count(2)
    expect(answers.locator('[data-label="Who"]')).to_have_text([BOB, "U0ALICE00"])
    expect(answers.locator('[data-label="Answer"]')).to_have_text(["Not yet", "Done"])
    expect(answers.locator('[data-label="Shown in Slack"]')).to_have_text(["yes", "yes"])
