"""Names, not ids, in a real browser against the real `api` target and the Slack stand-in's
seeded workspace: a channel and a person picked by name with the keyboard, mentions shown
by name in the preview and the list, the id one click away, the list filtered by a name."""

from __future__ import annotations

from typing import Any

from google.cloud import firestore
from playwright.sync_api import Page, expect

from core.store import MESSAGES
from emulator.slack_standin import SlackStandIn
from tests.fixtures.api import call
from tests.web.conftest import screenshot
from tests.web.form import fill_when

ANA = "U0ANAGARCIA"


def test_channels_and_people_by_name_in_the_form_the_preview_and_the_list(
    page: Page, slack: SlackStandIn, db: firestore.Client, api: Any
) -> None:
    slack.seed_workspace()
    assert call(api, "GET", "/directory/users")[0] == 200  # people's names cached, for mentions
    channel = page.get_by_role("combobox", name="Channel", exact=True).first
    channel.fill("gen")
    expect(page.get_by_role("option", name="#general")).to_be_visible()
    channel.press("ArrowDown")
    expect(channel).to_have_attribute("aria-activedescendant", "m-channel-options-0")
    channel.press("Enter")  # picks; does not submit
    expect(channel).to_have_value("#general")
    expect(page.locator("#m-channel-chosen")).to_have_text("#general: id C0GENERAL01")
    page.get_by_label("Message", exact=True).fill(f"Stand-up, <@{ANA}> leads today")
    fill_when(page, "2027-01-04 12:30", repeat="Every weekday (Monday to Friday)")
    expect(page.locator("aside.preview .mention")).to_have_text(["@Ana García"])
    expect(page.locator("#m-words")).to_have_text("Every weekday at 12:30 PM (America/New_York)")
    screenshot(page, "composer")  # the README's
    page.get_by_role("button", name="Schedule").click()
    expect(page.get_by_role("status").filter(has_text="Scheduled: message")).to_be_visible()
    [doc] = db.collection(MESSAGES).get()
    assert (doc.get("channel"), doc.get("text")) == (
        "C0GENERAL01",
        f"Stand-up, <@{ANA}> leads today",
    )

    row = page.locator("li.message").filter(has_text="leads today")
    expect(row.locator("h3")).to_contain_text("#general")
    expect(row.locator(".text")).to_have_text("Stand-up, @Ana García leads today")
    expect(row.locator("h3 code")).to_be_hidden()  # the id, until asked for
    row.get_by_role("button", name="id of #general").click()
    expect(row.locator("h3 code")).to_have_text("C0GENERAL01")

    # Escape closes the suggestions; the filter takes a name too.
    page.get_by_label("A person").check()
    person = page.get_by_role("combobox", name="Person")
    person.fill("gar")
    expect(page.get_by_role("option", name="@Ana García")).to_be_visible()
    person.press("Escape")
    expect(page.get_by_role("listbox", name="Person suggestions")).to_be_hidden()
    channel_filter = page.locator("#f-channel")
    channel_filter.fill("rand")
    page.get_by_role("option", name="#random").click()
    page.get_by_role("button", name="Show").click()
    expect(page.locator("li.message")).to_have_count(0)
    channel_filter.fill("general")
    page.get_by_role("option", name="#general").click()
    page.get_by_role("button", name="Show").click()
    expect(page.locator("li.message")).to_have_count(1)
