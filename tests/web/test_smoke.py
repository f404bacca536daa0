"""The page loads in a real browser from the `api` target, asks for the admin token once per
tab, and runs under its strict CSP without a single script or console error."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from playwright.sync_api import Page, expect

from tests.fixtures.runtime import ADMIN_TOKEN
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


def test_a_new_tab_asks_for_the_token_and_a_wrong_one_is_asked_again(
    open_page: Callable[..., Page],
) -> None:
    page = open_page(sign_in=False)
    page.get_by_label("Admin token").fill("not-the-token")
    page.get_by_role("button", name="Sign in").click()
    # The page's first API call answers 401: the form comes back, nothing is kept.
    expect(page.get_by_label("Admin token")).to_be_visible()
    assert page.evaluate("sessionStorage.length") == 0


def test_the_token_travels_only_in_the_authorization_header(
    open_page: Callable[..., Page],
) -> None:
    page = open_page(sign_in=False)
    sent: list[Any] = []
    page.on("request", lambda request: sent.append(request))
    page.get_by_label("Admin token").fill(ADMIN_TOKEN)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("status").filter(has_text="shown")).to_be_visible()
    calls = [request for request in sent if request.resource_type == "fetch"]
    assert any("/messages" in request.url for request in calls), "the page made no API call"
    for request in sent:
        headers = request.all_headers()
        assert ADMIN_TOKEN not in request.url
        assert "cookie" not in headers
        if request in calls:
            assert headers["authorization"] == f"Bearer {ADMIN_TOKEN}"
        else:  # the page's own files: no credential at all
            assert "authorization" not in headers, request.url
    assert page.context.cookies() == []
