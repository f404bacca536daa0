"""web/google_signin.js in headless Chromium, with Google Identity Services played by a stand-in
script served at its real address (nothing here reaches Google): the module loads the library
once, initializes it with the page's client id, renders the button into the given container,
and resolves with the credential the library hands its callback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Route

WEB = Path(__file__).resolve().parents[2] / "web"
ORIGIN = "http://page.test"
GIS_CLIENT = "https://accounts.google.com/gsi/client"
CLIENT_ID = "123456789012-composerpage.apps.googleusercontent.com"

PAGE = '<!doctype html><div id="signin"></div><script type="module" src="/start.js"></script>'
START = """
import { googleCredential } from "/google_signin.js";
window.signIn = () => googleCredential(window.clientId, document.getElementById("signin"));
"""
# What the page needs of Google's library: initialize and renderButton; a click on the
# button is a completed sign-in, and the callback gets a credential.
STAND_IN = """
window.gisLoads = (window.gisLoads || 0) + 1;
window.google = {accounts: {id: {
  initialize(config) { window.gisConfig = config; },
  renderButton(container, options) {
    const button = document.createElement("button");
    button.textContent = "Sign in with Google";
    button.onclick = () => window.gisConfig.callback({credential: "header.claims.signature"});
    container.append(button);
  },
}}};
"""


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A page of its own origin (not the api target's), on conftest's one session browser:
    Playwright's sync API cannot start a second time in the same thread."""
    context = browser.new_context()
    page = context.new_page()
    files = {"/": ("text/html", PAGE), "/start.js": ("text/javascript", START)}
    files["/google_signin.js"] = ("text/javascript", (WEB / "google_signin.js").read_text())

    def serve(route: Route) -> None:
        kind, body = files[route.request.url.removeprefix(ORIGIN)]
        route.fulfill(status=200, content_type=kind, body=body)

    page.route(f"{ORIGIN}/**", serve)
    page.goto(f"{ORIGIN}/")
    page.evaluate(f"window.clientId = {CLIENT_ID!r}")
    yield page
    context.close()


def google_answers(page: Page) -> None:
    page.route(
        GIS_CLIENT, lambda r: r.fulfill(status=200, content_type="text/javascript", body=STAND_IN)
    )


def test_resolves_with_the_credential_of_a_sign_in_on_the_rendered_button(page):
    google_answers(page)
    page.evaluate("() => { window.pending = window.signIn(); }")

    page.locator("#signin").get_by_role("button", name="Sign in with Google").click()

    assert page.evaluate("window.pending") == "header.claims.signature"
    assert page.evaluate("window.gisConfig.client_id") == CLIENT_ID


def test_the_library_is_loaded_once_however_often_sign_in_is_shown(page):
    google_answers(page)
    for _ in range(2):
        page.evaluate("() => { window.pending = window.signIn(); }")
        page.locator("#signin button").last.click()
        assert page.evaluate("window.pending") == "header.claims.signature"

    assert page.evaluate("window.gisLoads") == 1
    assert page.locator(f'script[src="{GIS_CLIENT}"]').count() == 1


def test_a_failed_load_rejects_and_the_next_sign_in_tries_again(page):
    page.route(GIS_CLIENT, lambda r: r.abort())
    error = page.evaluate("window.signIn().then(() => 'signed in', (e) => e.message)")
    assert error == "Google sign-in could not be loaded"

    page.unroute(GIS_CLIENT)
    google_answers(page)
    page.evaluate("() => { window.pending = window.signIn(); }")
    page.locator("#signin button").click()
    assert page.evaluate("window.pending") == "header.claims.signature"
