"""The Messages section in a real browser against the real `api` target on the emulator:
create and see it listed, tick and see it sent with its history, two tabs editing the same
message, XSS payloads kept inert, keyboard-only use, and a phone-sized layout."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

from google.cloud import firestore
from playwright.sync_api import Locator, Page, expect

from core.store import MESSAGES
from emulator.run_local import examples
from emulator.slack_standin import SlackStandIn
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.messages import ONE_OFF, message
from tests.fixtures.runtime import ADMIN_TOKEN
from tests.fixtures.tick import answer, at, bearer, tick
from tests.web.conftest import Watched, screenshot
from tests.web.form import fill_when

XSS = ["<img src=x onerror=alert(1)>", "<script>alert(1)</script>"]
# T0 is 10:00 in Berlin; 12:30 Berlin is 06:30 for the New York viewer.
SEND_LOCAL = "2027-01-04 12:30"


def compose(page: Page, text: str, *, channel: str = "C0123ABCD", zone: str = "Europe/Berlin"):
    page.get_by_label("Channel", exact=True).first.fill(channel)
    page.get_by_label("Message", exact=True).fill(text)
    page.get_by_label("Timezone", exact=True).fill(zone)
    fill_when(page, SEND_LOCAL)


def listed(page: Page, text: str) -> Locator:
    return page.locator("li.message").filter(has_text=text)


def test_create_shows_the_preview_then_the_message_in_the_list(
    page: Page, db: firestore.Client
) -> None:
    compose(page, "Deploy **today** at noon, see <https://example.com|the plan>")
    preview = page.locator("aside.preview")
    expect(preview.locator("strong")).to_have_text("today")
    expect(preview.get_by_role("link", name="the plan")).to_have_attribute(
        "href", "https://example.com"
    )
    # The one occurrence, in the schedule's zone and in the viewer's.
    expect(preview.locator("ol li")).to_have_count(1)
    expect(preview.locator("ol li")).to_contain_text("4 Jan 2027, 12:30 CET")
    expect(preview.locator("ol li")).to_contain_text("yours: 4 Jan 2027, 06:30 GMT-5")
    page.get_by_role("button", name="Schedule").click()
    expect(page.get_by_role("status").filter(has_text="Scheduled: message")).to_be_visible()
    row = listed(page, "Deploy **today** at noon")
    expect(row).to_have_count(1)
    expect(row.locator(".status")).to_have_text("pending")
    expect(row).to_contain_text("Next run (Europe/Berlin)4 Jan 2027, 12:30 CET")
    expect(row).to_contain_text("Next run (your time)4 Jan 2027, 06:30 GMT-5")
    # The next draft: Markdown as Slack shows it.
    compose(
        page,
        "*Retro* on Friday: bring one ~~complaint~~ _idea_. Notes: [wiki](https://example.com)",
    )
    expect(page.locator("aside.preview .slack em").first).to_have_text("Retro")
    screenshot(page, "composer-markdown")
    stored = db.collection(MESSAGES).get()
    assert [doc.get("text") for doc in stored] == [
        "Deploy **today** at noon, see <https://example.com|the plan>"
    ]


def test_a_recurring_message_previews_its_next_five_occurrences(
    page: Page, db: firestore.Client
) -> None:
    page.get_by_label("Channel", exact=True).first.fill("C0123ABCD")
    page.get_by_label("Message", exact=True).fill("Stand-up")
    page.get_by_label("Timezone", exact=True).fill("Europe/Berlin")
    page.get_by_label("Repeat", exact=True).select_option(label="Weekly, on chosen days")
    page.get_by_label("Monday").check()
    page.get_by_label("Wednesday").check()
    page.get_by_label("Date", exact=True).fill("2027-01-01")
    page.get_by_label("Time", exact=True).fill("09:30")
    occurrences = page.locator("aside.preview ol li")
    expect(occurrences).to_have_count(5)
    # T0 is Monday 10:00 Berlin: the first is Wednesday 09:30 there, 03:30 in New York.
    expect(occurrences.first).to_contain_text("6 Jan 2027, 09:30 CET")
    expect(occurrences.first).to_contain_text("yours: 6 Jan 2027, 03:30 GMT-5")
    expect(occurrences.nth(1)).to_contain_text("11 Jan 2027, 09:30 CET")
    page.get_by_role("button", name="Schedule").click()
    expect(listed(page, "Stand-up").locator(".status")).to_have_text("recurring")
    [doc] = db.collection(MESSAGES).get()
    assert (doc.get("rrule"), doc.get("dtstart")) == (
        "FREQ=WEEKLY;BYDAY=MO,WE;BYHOUR=9;BYMINUTE=30",
        "2027-01-01T09:30",
    )


def test_tick_then_the_list_shows_sent_with_its_history(
    page: Page, tick_app: Any, slack: SlackStandIn
) -> None:
    compose(page, "Ship it")
    page.get_by_role("button", name="Schedule").click()
    expect(listed(page, "Ship it")).to_have_count(1)
    # 12:30 Berlin is 11:30 UTC; the pass runs five minutes later.
    late = T0 + timedelta(hours=2, minutes=35)
    summary = answer(tick(tick_app.test_client(), headers=bearer(), body=at(late)), 200)
    assert summary["sent"] == 1
    assert [post.text for post in slack.posts()] == ["Ship it"]
    page.get_by_role("button", name="Show").click()
    row = listed(page, "Ship it")
    expect(row.locator(".status")).to_have_text("sent")
    row.get_by_role("button", name="History").click()
    history = row.locator("table.history tbody tr")
    expect(history).to_have_count(1)
    expect(history.locator('[data-label="Status"]')).to_have_text("sent")
    expect(history.locator('[data-label="Attempt"]')).to_have_text("1")
    expect(history.locator('[data-label="Lateness"]')).to_have_text("5 min late")
    expect(history.locator('[data-label="Occurrence"]')).to_contain_text("4 Jan 2027, 12:30 CET")
    expect(row.get_by_role("button", name="Edit")).to_have_count(0)
    screenshot(page, "sent-with-history")


def test_two_tabs_edit_the_same_message_and_the_second_is_told_to_reload(
    open_page: Callable[..., Page], api: Any, db: firestore.Client
) -> None:
    status, created = call(api, "POST", "/messages", ONE_OFF)
    assert status == 201
    first, second = open_page(), open_page()
    for tab in (first, second):
        listed(tab, ONE_OFF["text"]).get_by_role("button", name="Edit").click()
        expect(tab.get_by_label("Message", exact=True)).to_have_value(ONE_OFF["text"])
    first.get_by_label("Message", exact=True).fill("Deploy at one")
    first.get_by_role("button", name="Save changes").click()
    expect(first.get_by_role("status").filter(has_text="Saved: message")).to_be_visible()
    second.get_by_label("Message", exact=True).fill("Deploy at two")
    second.get_by_role("button", name="Save changes").click()
    alert = second.get_by_role("alert").filter(has_text="Someone changed this message")
    expect(alert).to_be_visible()
    screenshot(second, "stale-edit")
    assert message(db, created["id"])["text"] == "Deploy at one"  # never overwritten
    alert.get_by_role("button", name="Reload").click()
    expect(second.get_by_label("Message", exact=True)).to_have_value("Deploy at one")
    second.get_by_label("Message", exact=True).fill("Deploy at two")
    second.get_by_role("button", name="Save changes").click()
    expect(second.get_by_role("status").filter(has_text="Saved: message")).to_be_visible()
    assert message(db, created["id"])["text"] == "Deploy at two"
    assert message(db, created["id"])["version"] == 3


def test_an_edit_turns_a_one_off_into_a_series_in_place(
    page: Page, api: Any, db: firestore.Client
) -> None:
    _, created = call(api, "POST", "/messages", ONE_OFF)
    page.get_by_role("button", name="Show").click()
    listed(page, ONE_OFF["text"]).get_by_role("button", name="Edit").click()
    # The stored one-off, in its own zone (UTC), as a local wall clock.
    expect(page.get_by_label("Repeat", exact=True)).to_have_value("once")
    expect(page.get_by_label("Date", exact=True)).to_have_value("2027-01-04")
    expect(page.get_by_label("Time", exact=True)).to_have_value("12:00")
    fill_when(page, "2027-01-05 09:00", repeat="Every day")
    expect(page.locator("aside.preview ol li")).to_have_count(5)
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_role("status").filter(has_text="Saved: message")).to_be_visible()
    stored = message(db, created["id"])
    assert (stored["status"], stored["rrule"], stored.get("send_at")) == (
        "recurring",
        "FREQ=DAILY;BYHOUR=9;BYMINUTE=0",
        None,
    )
    assert len(db.collection(MESSAGES).get()) == 1  # in place, never a second record
    expect(listed(page, ONE_OFF["text"]).locator(".status")).to_have_text("recurring")


def test_an_edit_of_a_message_being_sent_says_so(
    page: Page, api: Any, db: firestore.Client
) -> None:
    _, created = call(api, "POST", "/messages", ONE_OFF)
    page.get_by_role("button", name="Show").click()
    listed(page, ONE_OFF["text"]).get_by_role("button", name="Edit").click()
    # The processor claims it meanwhile (a claim does not change what If-Match compares).
    lease = {"owner": "worker-a", "expires_at": T0 + timedelta(minutes=5), "occurrence_at": T0}
    db.collection(MESSAGES).document(created["id"]).update({"status": "sending", "lease": lease})
    page.get_by_label("Message", exact=True).fill("Too late")
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_role("alert").filter(has_text="being sent right now")).to_be_visible()
    assert message(db, created["id"])["text"] == ONE_OFF["text"]
    page.get_by_role("button", name="Stop editing").click()
    page.get_by_label("Status").select_option(label="Sending now (in flight)")
    page.get_by_role("button", name="Show").click()
    expect(listed(page, ONE_OFF["text"]).locator(".status")).to_have_text("sending")
    expect(page.locator("li.message")).to_have_count(1)


def test_xss_payloads_stay_inert_in_the_preview_and_the_list(
    page: Page, watched: dict[int, Watched], db: firestore.Client
) -> None:
    text = f"{XSS[0]} and {XSS[1]} and [go](javascript:alert(1))"
    compose(page, text)
    preview = page.locator("aside.preview .slack")
    expect(preview).to_contain_text(XSS[0])
    expect(preview).to_contain_text(XSS[1])
    page.get_by_role("button", name="Schedule").click()
    row = listed(page, "and [go](javascript:alert(1))")
    expect(row.locator(".text")).to_have_text(text)
    screenshot(page, "xss-inert")
    assert page.locator("img[src='x'], #messages script, a[href^='javascript']").count() == 0
    assert watched[id(page)].dialogs == []
    assert watched[id(page)].errors == []
    assert message(db, db.collection(MESSAGES).get()[0].id)["text"] == text


def test_cancel_pause_and_resume(page: Page, api: Any, db: firestore.Client) -> None:
    _, created = call(api, "POST", "/messages", ONE_OFF)
    page.get_by_role("button", name="Show").click()
    row = listed(page, ONE_OFF["text"])
    row.get_by_role("button", name="Pause").click()
    expect(row.locator(".status")).to_have_text("paused")
    row.get_by_role("button", name="Resume").click()
    expect(row.locator(".status")).to_have_text("pending")
    row.get_by_role("button", name="Cancel message").click()  # the confirm is accepted
    expect(row.locator(".status")).to_have_text("cancelled")
    assert message(db, created["id"])["status"] == "cancelled"


def test_the_list_shows_failures_with_their_reason_filters_and_pages(
    page: Page, api: Any, db: firestore.Client
) -> None:
    for n in range(22):
        assert call(api, "POST", "/messages", ONE_OFF | {"text": f"note {n:02}"})[0] == 201
    failed = db.collection(MESSAGES).document()
    failed.set(
        {
            "channel": "C0999ZZZZ",
            "text": "Lost cause",
            "timezone": "UTC",
            "send_at": T0,
            "next_run_at": T0,
            "status": "failed",
            "version": 4,
            "last_error": {"code": "channel_not_found", "message": "no such channel", "at": T0},
        }
    )
    page.get_by_role("button", name="Show").click()
    expect(page.locator("li.message")).to_have_count(20)
    page.get_by_role("button", name="More messages").click()
    expect(page.locator("li.message")).to_have_count(23)
    expect(page.get_by_role("button", name="More messages")).to_be_hidden()
    page.get_by_label("Status").select_option(label="Failed")
    page.get_by_role("button", name="Show").click()
    expect(page.locator("li.message")).to_have_count(1)
    # In the error catalog's words, with what the failure said.
    expect(listed(page, "Lost cause").locator(".reason")).to_have_text(
        "The channel was not found. Check C0999ZZZZ still exists; a private channel needs"
        " /invite @Scheduler in it. Then pick the channel again or Retry. (no such channel)"
    )
    page.get_by_label("Status").select_option(label="All messages")
    page.get_by_label("Channel", exact=True).last.fill("C0999ZZZZ")
    page.get_by_role("button", name="Show").click()
    expect(page.locator("li.message")).to_have_count(1)


def test_a_422_is_shown_next_to_the_field_it_names(page: Page) -> None:
    compose(page, "Hello", channel="general")
    page.get_by_role("button", name="Schedule").click()
    channel = page.locator("#m-channel")
    expect(channel).to_have_attribute("aria-invalid", "true")
    problem = page.locator("#m-channel-problem")
    expect(problem).to_be_visible()
    described = channel.get_attribute("aria-describedby") or ""
    assert "m-channel-problem" in described.split()
    expect(channel).to_be_focused()
    unlabelled = page.evaluate(
        """[...document.querySelectorAll('#messages input, #messages select, #messages textarea')]
             .filter((field) => field.labels.length === 0 && !field.closest('[hidden]'))
             .map((field) => field.name)"""
    )
    assert unlabelled == []


def tab_to(page: Page, element_id: str, limit: int = 40) -> None:
    for _ in range(limit):
        if page.evaluate("document.activeElement.id") == element_id:
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached #{element_id}")


def test_a_keyboard_only_create(open_page: Callable[..., Page], db: firestore.Client) -> None:
    page = open_page(sign_in=False)
    page.keyboard.type(ADMIN_TOKEN)  # the token field has the focus
    page.keyboard.press("Enter")
    tab_to(page, "m-channel")
    outline = page.evaluate(
        "[getComputedStyle(document.activeElement).outlineStyle,"
        " getComputedStyle(document.activeElement).outlineWidth]"
    )
    assert outline == ["solid", "3px"]  # focus is visible
    page.keyboard.type("C0123ABCD")
    page.keyboard.press("Tab")
    page.keyboard.type("Typed without a mouse")
    tab_to(page, "m-timezone")
    page.keyboard.type("Europe/Berlin")
    tab_to(page, "m-date")
    # In the order the field shows it: this Chromium has only its en-US interface language.
    page.keyboard.type("01042027")
    tab_to(page, "m-time")
    page.keyboard.type("1230PM")
    tab_to(page, "m-channel", limit=60)  # round again: Enter in a text field submits
    page.keyboard.press("Enter")
    row = listed(page, "Typed without a mouse")
    expect(row).to_contain_text("4 Jan 2027, 12:30 CET")
    [doc] = db.collection(MESSAGES).get()
    assert doc.get("send_at").isoformat() == "2027-01-04T11:30:00+00:00"


def test_a_phone_wide_layout_has_no_horizontal_scroll(
    open_page: Callable[..., Page], api: Any
) -> None:
    page = open_page({"width": 375, "height": 800})
    long_text = "A very long link https://example.com/" + "x" * 200 + " and more"
    call(api, "POST", "/messages", ONE_OFF | {"text": long_text})
    compose(page, long_text)
    page.get_by_role("button", name="Show").click()
    listed(page, "A very long link").get_by_role("button", name="History").click()
    expect(page.locator("aside.preview .slack")).to_be_visible()
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1] == 375
    screenshot(page, "phone")


def test_the_make_run_examples_list_after_a_pass(
    page: Page, db: firestore.Client, tick_app: Any, watched: dict[int, Watched]
) -> None:
    """What `make run` seeds, after its first pass: sent, failed with its reason (a timezone
    that does not exist), a series waiting; the page shows each without a script error."""
    seeded = examples(T0, "C0123ABCD")
    for doc_id, data in seeded.items():
        written = replace(data, created_at=T0, updated_at=T0, version=1)
        db.collection(MESSAGES).document(doc_id).set(written.to_document())
    answer(tick(tick_app.test_client(), headers=bearer(), body=at(T0)), 200)
    page.get_by_role("button", name="Show").click()
    expect(page.locator("li.message")).to_have_count(len(seeded))
    bad = page.locator('li.message[data-id="example-bad-timezone"]')
    expect(bad.locator(".status")).to_have_text("failed")
    expect(bad.locator(".reason")).to_contain_text("The timezone is not valid.")
    expect(bad.locator(".reason")).to_contain_text("unknown IANA timezone 'Mars/Olympus_Mons'")
    expect(page.locator('li.message[data-id="example-welcome"] .status')).to_have_text("sent")
    bad.get_by_role("button", name="Edit").click()
    expect(page.get_by_label("Timezone", exact=True)).to_have_value("Mars/Olympus_Mons")
    expect(page.locator("aside.preview")).to_contain_text("No preview yet: timezone")
    # Refused before any claim: no ledger entry, and the history says so.
    bad.get_by_role("button", name="History").click()
    expect(bad.locator(".deliveries")).to_have_text("Nothing was delivered yet.")
    screenshot(page, "make-run-examples")
    assert watched[id(page)].errors == []
