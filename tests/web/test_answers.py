"""Answers in the page: a message's History and a rotation's view show who answered what
(labels from the catalog the post was sent with), newest first, in a real browser against
the real `api` target."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from playwright.sync_api import Page, expect

from targets.kinds import run_pass
from tests.fixtures.clock import T0
from tests.fixtures.interactions import click
from tests.fixtures.rotations import ALICE, seed_rotation
from tests.interactions import conftest as interactions
from tests.web.conftest import Watched
from tests.web.test_rotations_page import XSS_NAME, open_rotation

# The `interactions` target's fixtures, shared with tests/interactions/.
interactions_app = interactions.interactions_app
clicks = interactions.clicks
posted = interactions.posted

BOB = "U0BOB0000"
PHONE = {"width": 375, "height": 800}


def test_the_history_shows_the_answers(
    page: Page, clicks: Any, posted: Any, clock: Any, rt: Any
) -> None:
    post = posted(text="Did you finish the plan?")
    click(clicks, post, "done", "U0ALICE00", T0)
    clock.advance(timedelta(minutes=1))
    click(clicks, post, "not-yet", BOB, clock.now())
    run_pass(rt)  # shows the answers in the post, off the clicks' request path

    page.get_by_role("button", name="Show").click()
    row = page.locator("li.message").filter(has_text="Did you finish the plan?")
    row.get_by_role("button", name="History").click()

    answers = row.locator("table.answers tbody tr")
    expect(answers).to_have_count(2)
    expect(answers.locator('[data-label="Who"]')).to_have_text([BOB, "U0ALICE00"])
    expect(answers.locator('[data-label="Answer"]')).to_have_text(["Not yet", "Done"])
    expect(answers.locator('[data-label="Shown in Slack"]')).to_have_text(["yes", "yes"])


def test_a_rotations_view_shows_its_answers_and_a_skip(
    open_page: Any,
    watched: dict[int, Watched],
    clicks: Any,
    rt: Any,
    db: Any,
    slack: Any,
    clock: Any,
) -> None:
    actions = [{"id": "take", "label": XSS_NAME}, {"id": "skip_today", "label": "Skip me today"}]
    seed_rotation(db, actions=actions)
    run_pass(rt)
    (post,) = slack.posts()
    click(clicks, post, "skip_today", ALICE, T0)  # Alice's turn: handed to the next member
    clock.advance(timedelta(minutes=1))
    click(clicks, post, "take", BOB, clock.now())
    run_pass(rt)  # shows the answers in the post, off the clicks' request path

    section = open_rotation(open_page(PHONE), "Stand-up host")

    answers = section.locator("table.answers tbody tr")
    expect(answers).to_have_count(2)
    expect(answers.locator('[data-label="Who"]')).to_have_text([BOB, ALICE])
    expect(answers.locator('[data-label="Answer"]')).to_have_text([XSS_NAME, "Skip me today"])
    expect(answers.locator('[data-label="Shown in Slack"]')).to_have_text(["yes", "yes"])
    assert section.locator("img").count() == 0
    assert watched[id(section.page)].errors == []
