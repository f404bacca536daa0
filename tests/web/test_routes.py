"""Every view has its own URL: `#/rotations/{id}` and `#/messages/{id}` open that record,
a reload keeps it, and back/forward move between the records opened, in a real browser on
the real `api` target."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from playwright.sync_api import Page, expect

from tests.fixtures.api import call
from tests.fixtures.messages import ONE_OFF
from tests.fixtures.rotations import ROTATION, create
from tests.web.conftest import Watched

# The region around whatever has the keyboard focus: the record a URL opened.
FOCUSED_RECORD = """() => document.activeElement
  ?.closest("section, article, li, form, [role=region], dialog")?.textContent ?? ''"""


def rotation_form_name(page: Page) -> Any:
    return page.locator("#rotations form.rot-form").get_by_label("Name", exact=True)


def test_a_rotations_url_opens_it_survives_a_reload_and_back_goes_to_the_one_before(
    open_page: Callable[..., Page], watched: dict[int, Watched], api: Any, live_api: str
) -> None:
    on_call = create(api, ROTATION)
    standup = create(api, {**ROTATION, "name": "Stand-up host"})
    page = open_page()

    page.goto(f"{live_api}/#/rotations/{standup['id']}")
    page.reload()
    expect(rotation_form_name(page)).to_have_value("Stand-up host")
    expect(page.get_by_role("link", name="Rotations")).to_have_attribute("aria-current", "page")

    page.get_by_role("link", name="Rotations").click()  # the list alone: no rotation open
    expect(page.locator("#rotations form.rot-form")).to_have_count(0)
    page.locator("#rotations").get_by_role("link", name="On-call", exact=True).click()
    expect(page).to_have_url(f"{live_api}/#/rotations/{on_call['id']}")
    expect(rotation_form_name(page)).to_have_value("On-call")

    page.go_back()
    expect(page).to_have_url(f"{live_api}/#/rotations")
    expect(page.locator("#rotations form.rot-form")).to_have_count(0)
    page.go_back()
    expect(page).to_have_url(f"{live_api}/#/rotations/{standup['id']}")
    expect(rotation_form_name(page)).to_have_value("Stand-up host")
    page.go_forward()
    page.go_forward()
    expect(rotation_form_name(page)).to_have_value("On-call")
    assert watched[id(page)].errors == []


def test_a_messages_url_opens_that_message_after_a_reload(
    open_page: Callable[..., Page], watched: dict[int, Watched], api: Any, live_api: str
) -> None:
    call(api, "POST", "/messages", {**ONE_OFF, "text": "Lunch is at noon"})
    status, wanted = call(api, "POST", "/messages", {**ONE_OFF, "text": "Deploy freeze starts"})
    assert status == 201
    page = open_page()

    page.goto(f"{live_api}/#/messages/{wanted['id']}")
    page.reload()

    expect(page.locator("#messages")).to_be_visible()
    expect(page.locator("#messages :focus")).to_have_count(1)
    record = page.evaluate(FOCUSED_RECORD)
    assert "Deploy freeze starts" in record and "Lunch is at noon" not in record
    assert watched[id(page)].errors == []
