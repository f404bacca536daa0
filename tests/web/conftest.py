"""Browser fixtures: Debian's headless Chromium driven by Playwright, on the real `api` target
served over HTTP (`live_api`: this test's Firestore project and clock). Each `open_page()`
is a new browser context, i.e. a separate tab with its own sessionStorage, signed in with
the admin token the way a person types it. Screenshots go to .artifacts/screenshots/."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

from tests.fixtures.runtime import ADMIN_TOKEN, ROOT

CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = ROOT / ".artifacts" / "screenshots"
WIDE = {"width": 1280, "height": 900}
# The viewer sits in New York and reads British dates: neither is a message's timezone here,
# so "the message's zone and the viewer's" are visibly two different times.
# The machine running the tests is shared and slow at times: a wait is bounded, not timed.
TIMEOUT_MS = 20_000
expect.set_options(timeout=TIMEOUT_MS)
VIEWER = {"locale": "en-GB", "timezone_id": "America/New_York"}


@dataclass
class Watched:
    """What a page did that a person would notice: dialogs opened, script errors, console
    errors (a CSP violation lands there)."""

    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def watched() -> dict[int, Watched]:
    return {}


@pytest.fixture
def open_page(
    browser: Browser, live_api: str, watched: dict[int, Watched]
) -> Iterator[Callable[..., Page]]:
    """`open_page(viewport=..., sign_in=True)`: a new tab on the composer page."""
    contexts: list[BrowserContext] = []

    def open_(viewport: dict[str, int] | None = None, *, sign_in: bool = True) -> Page:
        context = browser.new_context(viewport=viewport or WIDE, **VIEWER)  # type: ignore[arg-type]
        contexts.append(context)
        context.set_default_timeout(TIMEOUT_MS)
        page = context.new_page()
        seen = watched.setdefault(id(page), Watched())
        page.on("dialog", lambda dialog: _answer(dialog, seen))
        page.on("pageerror", lambda error: seen.errors.append(str(error)))
        page.on("console", lambda msg: _console(msg, seen))
        page.goto(f"{live_api}/#/messages")
        if sign_in:
            page.get_by_label("Admin token").fill(ADMIN_TOKEN)
            page.get_by_role("button", name="Sign in").click()
            page.get_by_role("heading", name="Messages", exact=True).wait_for()
        return page

    yield open_
    for context in contexts:
        context.close()


def _console(message: Any, seen: Watched) -> None:
    # Chromium logs every 4xx answer as "Failed to load resource"; the page expects those
    # (a 422 from a preview, a 412) and shows them. Anything else is an error (a CSP one too).
    if message.type == "error" and not message.text.startswith("Failed to load resource"):
        seen.errors.append(message.text)


def _answer(dialog: Any, seen: Watched) -> None:
    """Records every dialog; accepts a confirm (the page asks before cancelling)."""
    seen.dialogs.append(f"{dialog.type}: {dialog.message}")
    if dialog.type == "confirm":
        dialog.accept()
    else:
        dialog.dismiss()


@pytest.fixture
def page(open_page: Callable[..., Page]) -> Page:
    return open_page()


def screenshot(page: Page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
