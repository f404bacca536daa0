"""The recurrence picker (web/recurrence.js) in a real browser against the real `api` target:
a series made the way a person says it is stored as they meant it, a stored rule reads back
into the same controls, a rule's problem sits beside the rule, an invalid draft leaves no
stale preview, and the controls fit a phone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.cloud import firestore
from playwright.sync_api import Page, expect

from core.store import MESSAGES
from tests.fixtures.api import call
from tests.fixtures.messages import SERIES
from tests.web.form import fill_when

WEEKDAYS = "Every weekday (Monday to Friday)"


def test_a_weekday_series_made_with_the_picker_is_stored_as_meant(
    page: Page, db: firestore.Client
) -> None:
    # The viewer's zone is the default.
    expect(page.get_by_label("Timezone", exact=True)).to_have_value("America/New_York")
    page.get_by_label("Channel", exact=True).first.fill("C0123ABCD")
    page.get_by_label("Message", exact=True).fill("Stand-up at half past")
    fill_when(page, "2027-01-04 09:30", repeat=WEEKDAYS)
    occurrences = page.locator("aside.preview ol li")
    expect(occurrences).to_have_count(5)
    # T0 is Monday 04:00 in New York: Monday 09:30 is the first, then Tuesday.
    expect(occurrences.first).to_contain_text("4 Jan 2027, 09:30 GMT-5")
    expect(occurrences.nth(1)).to_contain_text("5 Jan 2027, 09:30 GMT-5")
    words = "Every weekday at 9:30 AM (America/New_York)"
    expect(page.locator("#m-words")).to_have_text(words)
    page.get_by_role("button", name="Schedule").click()
    row = page.locator("li.message").filter(has_text="Stand-up at half past")
    expect(row.locator(".status")).to_have_text("recurring")
    expect(row).to_contain_text(f"Schedule{words}")
    expect(row).not_to_contain_text("FREQ=")
    expect(row.locator("dd").first).not_to_contain_text("2027-01-04T09:30")
    [doc] = db.collection(MESSAGES).get()
    assert (doc.get("rrule"), doc.get("dtstart"), doc.get("timezone")) == (
        "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=30",
        "2027-01-04T09:30",
        "America/New_York",
    )


def test_a_stored_rule_reads_back_into_the_picker(page: Page, api: Any) -> None:
    last_friday = SERIES | {
        "text": "Monthly demo",
        "rrule": "FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=17;BYMINUTE=0",
        "dtstart": "2027-01-29T17:00",
    }
    expert = SERIES | {"text": "Ten reminders", "rrule": "FREQ=DAILY;COUNT=10"}
    for body in (SERIES, last_friday, expert):
        assert call(api, "POST", "/messages", body)[0] == 201
    page.get_by_role("button", name="Show").click()
    repeat = page.get_by_label("Repeat", exact=True)

    edit(page, "Stand-up")
    expect(repeat).to_have_value("weekly")
    expect(page.get_by_label("Time", exact=True)).to_have_value("09:30")
    checked = [page.get_by_label(day).is_checked() for day in ("Monday", "Wednesday", "Friday")]
    assert checked == [True, True, False]
    # Read back and written again, the rule is the same: nothing to save.
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_role("status").filter(has_text="Nothing changed.")).to_be_visible()

    edit(page, "Monthly demo")
    expect(repeat).to_have_value("monthly")
    expect(page.get_by_label("Monthly on")).to_have_value("BYDAY=-1FR")
    expect(page.get_by_label("Monthly on").locator("option:checked")).to_have_text(
        "On the last Friday"
    )
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_role("status").filter(has_text="Nothing changed.")).to_be_visible()

    edit(page, "Ten reminders")
    expect(repeat).to_have_value("custom")
    expect(page.get_by_label("Rule (RRULE)")).to_have_value("FREQ=DAILY;COUNT=10")


def edit(page: Page, text: str) -> None:
    row = page.locator("li.message").filter(has_text=text)
    row.get_by_role("button", name="Edit").click()
    expect(page.get_by_label("Message", exact=True)).to_have_value(text)


def test_a_rule_typed_as_words_is_shown_beside_the_rule_and_clears_the_preview(
    page: Page, db: firestore.Client
) -> None:
    page.get_by_label("Channel", exact=True).first.fill("C0123ABCD")
    page.get_by_label("Message", exact=True).fill("Stand-up")
    fill_when(page, "2027-01-04 09:30", repeat="Every day")
    preview = page.locator("aside.preview")
    expect(preview.locator("ol li")).to_have_count(5)
    expect(preview.locator(".slack")).to_have_text("Stand-up")
    expect(page.locator("#m-words")).to_have_text("Every day at 9:30 AM (America/New_York)")
    page.get_by_label("Repeat", exact=True).select_option(label="Custom rule (RRULE, for experts)")
    page.get_by_label("Rule (RRULE)").fill("every weekday at 9:30")
    # The draft makes no schedule now: nothing of the old preview stays on screen.
    expect(preview).to_contain_text("No preview yet: rrule")
    expect(preview.locator("ol li")).to_have_count(0)
    expect(preview.locator(".slack")).to_have_count(0)
    expect(page.locator("#m-words")).to_be_hidden()
    page.get_by_role("button", name="Schedule").click()
    rule = page.locator("#m-rule")
    expect(rule).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#m-rule-problem")).to_be_visible()
    expect(page.locator("#m-date-problem")).to_have_count(0)  # the rule is what is wrong
    expect(rule).to_be_focused()
    assert db.collection(MESSAGES).get() == []


def test_every_repeat_choice_fits_a_phone(open_page: Callable[..., Page]) -> None:
    page = open_page({"width": 375, "height": 800})
    fill_when(page, "2027-01-29 17:00")
    repeat = page.get_by_label("Repeat", exact=True)
    for choice in ("once", "daily", "weekdays", "weekly", "monthly", "yearly", "custom"):
        repeat.select_option(choice)
        widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert widths[0] <= widths[1] == 375, choice
    expect(page.get_by_label("Rule (RRULE)")).to_be_visible()
    # Weekly starts on the start date's weekday (29 Jan 2027 is a Friday).
    repeat.select_option("weekly")
    expect(page.get_by_label("Friday")).to_be_checked()
    expect(page.get_by_label("Monday")).not_to_be_checked()
