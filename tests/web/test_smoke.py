"""The page loads in a real browser from the `api` target, asks for the admin token once per
tab, and runs under its strict CSP without a single script or console error."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import Page, expect

from tests.web.conftest import Watched, screenshot


def test_a_tab_signs_in_once_and_shows_the_messages_section(
    open_page: Callable[..., Page], watched: dict[int, Watched]
) -> None:
    page = open_page()
    expect(page.get_by_role("navigation", name="Sections")).to_be_visible()
    expect(page.get_by_role("link", name="Messages")).to_have_attribute("aria-current", "page")
    # A reload keeps the tab's token: no second sign-in.
    page.reload()
    expect(page.get_by_role("heading", name="Messages", exact=True)).to_be_visible()
    expect(page.get_by_label("Admin token")).to_have_count(0)
    page.get_by_role("link", name="Rotations").click()
    # (The rotations section may be empty here: its `hidden` flag is what the nav sets.)
    expect(page.locator("#rotations")).to_have_js_property("hidden", False)
    expect(page.locator("#messages")).to_be_hidden()
    screenshot(page, "smoke")
    assert watched[id(page)].errors == []
