"""axe-core on every view of the composer page, at 1280 and 375 px, on the real `api` target
with its CSP as served: 0 serious or critical violations. A failure names each rule, its
impact and the elements it is on. Run one view: `pytest tests/web/test_accessibility.py -k
people`. A new view is one more row of VIEWS: how to reach it and what shows it is ready."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from google.cloud import firestore
from playwright.sync_api import Page, expect

from core.documents.categories import CategoryField
from core.store import CATEGORIES
from emulator.run_local import EXAMPLE_ROTATION, seed
from emulator.slack_standin import SlackStandIn
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.tick import answer, at, bearer, tick
from tests.web.axe import describe, violations
from tests.web.conftest import Watched
from tests.web.form import fill_when

WIDTHS = ({"width": 1280, "height": 900}, {"width": 375, "height": 800})
CHANNEL = "C0123ABCD"


@dataclass(frozen=True)
class View:
    """`show` takes a signed-in tab (or, with sign_in False, a tab asked for its token) to
    the view and returns once the view shows its data."""

    name: str
    show: Callable[[Page], None]
    sign_in: bool = True


def sign_in_form(page: Page) -> None:
    expect(page.get_by_label("Admin token")).to_be_visible()


def sign_in_refused(page: Page) -> None:
    """A token kept from an earlier run, refused: the form with the API's reason."""
    page.evaluate("sessionStorage.setItem('composer.admin-token', 'from-an-earlier-run')")
    page.reload()
    expect(page.get_by_role("alert").filter(has_text="refused")).to_be_visible()


def messages_list(page: Page) -> None:
    # Listed as the section opens (the data is there before the tab): no second load races it.
    expect(page.locator('li.message[data-id="example-weekly"]')).to_be_visible()


def message_form(page: Page) -> None:
    """A weekly draft with its preview (the "How Slack shows it" box, the words), and the
    person picker's suggestions open."""
    page.get_by_label("Channel", exact=True).first.fill(CHANNEL)
    page.get_by_label("Message", exact=True).fill("*Retro* on Friday: <https://example.com|notes>")
    page.get_by_label("Timezone", exact=True).fill("Europe/Berlin")
    fill_when(page, "2027-01-04 12:30", repeat="Weekly, on chosen days")
    expect(page.locator("aside.preview .slack em").first).to_have_text("Retro")
    expect(page.locator("#m-words")).to_be_visible()
    page.get_by_label("A person").check()
    page.get_by_role("combobox", name="Person").fill("ana")
    page.get_by_role("combobox", name="Person").press("ArrowDown")
    expect(page.get_by_role("option", name="@Ana García")).to_be_visible()


def message_detail(page: Page) -> None:
    """A message's own view, with the people picker of "Send a test to me" open."""
    messages_list(page)
    page.locator('li.message[data-id="example-weekly"]').get_by_role(
        "link", name="Details and actions"
    ).click()
    page.get_by_role("button", name="Send a test to me").click()
    expect(page.get_by_role("combobox", name="Send the test to")).to_be_visible()


def occurrence_edit(page: Page) -> None:
    """A message's own view, editing only its next occurrence."""
    messages_list(page)
    page.locator('li.message[data-id="example-weekly"]').get_by_role(
        "link", name="Details and actions"
    ).click()
    page.get_by_role("button", name="Edit only this occurrence").click()
    expect(page.get_by_label("Text of this occurrence")).to_be_visible()


def message_history(page: Page) -> None:
    """A message's history and answers (until its own view, `#/messages/{id}`, exists)."""
    messages_list(page)
    row = page.locator('li.message[data-id="example-welcome"]')
    row.get_by_role("button", name="History").click()
    expect(row.locator("table.history tbody tr")).to_have_count(1)


def rotations_list(page: Page) -> None:
    page.get_by_role("link", name="Rotations").click()
    expect(page.locator("#rotations").get_by_role("link", name="Stand-up host")).to_be_visible()


def rotation_detail(page: Page) -> None:
    rotations_list(page)
    section = page.locator("#rotations")
    section.get_by_role("link", name="Stand-up host", exact=True).click()
    expect(section.locator(".rot-turn-member").first).to_be_visible()
    section.get_by_role("button", name="Add an away period").click()
    expect(section.get_by_role("textbox", name="Skip date 1")).to_have_value("2027-01-06")


def people(page: Page) -> None:
    page.get_by_role("link", name="People").click()
    section = page.locator("#people")
    section.get_by_label("Slack user id").fill("U0DEMOANA")
    section.get_by_role("button", name="Show preferences").click()
    expect(section.get_by_label("Nudges")).to_be_visible()


def agenda(page: Page) -> None:
    page.get_by_role("link", name="Agenda").click()
    expect(page.locator("#agenda .agenda-item").first).to_be_visible()


def people_list(page: Page) -> None:
    page.get_by_role("link", name="People").click()
    section = page.locator("#people .p-directory")
    expect(section.locator("li").first.or_(section.get_by_text("Nobody matches"))).to_be_visible()


# Every view is a row here: how to reach it and what shows it is ready.
VIEWS = [
    View("sign-in", sign_in_form, sign_in=False),
    View("sign-in refused", sign_in_refused, sign_in=False),
    View("messages list", messages_list),
    View("message form", message_form),
    View("message history", message_history),
    View("message detail", message_detail),
    View("occurrence edit", occurrence_edit),
    View("rotations", rotations_list),
    View("rotation detail", rotation_detail),
    View("people", people),
    View("agenda", agenda),
    View("people list", people_list),
]


@pytest.fixture
def workspace(db: firestore.Client, tick_app: Any, api: Any, slack: SlackStandIn) -> None:
    """`make run`'s examples after a pass (sent, failed, waiting, a rotation's turn), a skip
    date on the rotation, a category for the People view, and the Slack workspace's names."""
    slack.seed_workspace()
    seed(db, CHANNEL, T0)
    skip = {"skips": {"2027-01-06": ["U0DEMOANA"]}}
    status, _ = call(api, "PUT", f"/rotations/{EXAMPLE_ROTATION}", skip, headers={"If-Match": "1"})
    assert status == 200
    db.collection(CATEGORIES).document("nudges").set({CategoryField.LABEL: "Nudges"})
    answer(tick(tick_app.test_client(), headers=bearer(), body=at(T0)), 200)


@pytest.mark.parametrize("view", VIEWS, ids=[view.name for view in VIEWS])
def test_no_serious_or_critical_axe_violation(
    view: View, workspace: None, open_page: Callable[..., Page], watched: dict[int, Watched]
) -> None:
    found: dict[str, str] = {}
    for size in WIDTHS:
        page = open_page(size, sign_in=view.sign_in)
        view.show(page)
        if blocking := violations(page):
            found[f"{size['width']} px"] = describe(blocking)
        assert watched[id(page)].errors == []  # axe ran under the CSP without a refusal
    assert not found, "\n".join(f"{view.name} at {width}:\n{text}" for width, text in found.items())
