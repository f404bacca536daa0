"""Sign-in states in a real browser: a tab is either signing in (only the sign-in form) or
signed in (the sections), never both. A refused token, kept from an earlier run or refused
mid-session, brings back the form alone with the API's reason at its top, beside the token
field, in view on a phone without scrolling; a draft typed before it is still there after."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import Page, expect

from tests.fixtures.runtime import ADMIN_TOKEN
from tests.web.conftest import Watched, screenshot

PHONE = {"width": 375, "height": 667}
KEPT = "composer.admin-token"  # web/signin.js's sessionStorage key


def only_the_sign_in_form(page: Page) -> None:
    """The reason is shown (so the state has settled), in view, and nothing else of the app."""
    error = page.get_by_role("alert").filter(has_text="refused")
    expect(error).to_be_visible()
    expect(error).to_be_in_viewport()
    expect(page.get_by_label("Admin token")).to_be_focused()
    expect(page.get_by_label("Admin token")).to_have_attribute("aria-invalid", "true")
    for section in ("#messages", "#rotations", "#people"):
        expect(page.locator(section)).to_be_hidden()
    expect(page.get_by_role("navigation", name="Sections")).to_be_hidden()
    expect(page.get_by_role("button", name="Sign out")).to_be_hidden()


def sign_in(page: Page) -> None:
    page.get_by_label("Admin token").fill(ADMIN_TOKEN)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Messages", exact=True)).to_be_visible()
    expect(page.get_by_role("navigation", name="Sections")).to_be_visible()
    expect(page.get_by_label("Admin token")).to_have_count(0)


def test_a_stale_token_shows_only_the_sign_in_form_with_its_reason_in_view(
    open_page: Callable[..., Page], watched: dict[int, Watched]
) -> None:
    page = open_page(PHONE, sign_in=False)
    page.evaluate(f"sessionStorage.setItem('{KEPT}', 'a-token-from-an-earlier-run')")
    page.reload()

    only_the_sign_in_form(page)
    expect(page.get_by_role("alert")).to_contain_text("invalid bearer token")
    expect(page.get_by_role("heading", name="Schedule a message")).to_have_count(0)
    screenshot(page, "signin-stale-token")
    sign_in(page)
    expect(page.get_by_role("alert").filter(has_text="refused")).to_have_count(0)
    assert page.evaluate(f"sessionStorage.getItem('{KEPT}')") == ADMIN_TOKEN
    assert watched[id(page)].errors == []


def test_a_token_refused_mid_session_asks_again_and_keeps_the_draft(
    open_page: Callable[..., Page],
) -> None:
    page = open_page(PHONE)
    page.get_by_label("Message", exact=True).fill("A draft typed before the token went stale")
    page.evaluate(f"sessionStorage.setItem('{KEPT}', 'rotated-away')")

    page.get_by_role("button", name="Show").click()  # the next API call answers 401

    only_the_sign_in_form(page)
    sign_in(page)
    expect(page.get_by_label("Message", exact=True)).to_have_value(
        "A draft typed before the token went stale"
    )
    expect(page.get_by_role("link", name="Messages")).to_have_attribute("aria-current", "page")
