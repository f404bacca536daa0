"""A message's own view (#/messages/{id}) in a real browser against the real `api` target:
the actions on one occurrence (send now, skip next, a test to a person, edit only this
occurrence, retry) as a team lead uses them, with what Slack received counted in the
stand-in, and a failure in the error catalog's words."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from google.cloud import firestore
from playwright.sync_api import Page, expect

from core.store import DELIVERIES, MESSAGES
from emulator.slack_standin import SlackStandIn
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.messages import ONE_OFF, SERIES, message
from tests.fixtures.tick import answer, at, bearer, tick
from tests.web.conftest import Watched, screenshot

GENERAL = "C0GENERAL01"
ANA = "U0ANAGARCIA"


def open_message(open_page: Callable[..., Page], ident: str, **kwargs: Any) -> Page:
    page = open_page(**kwargs)
    page.goto(page.url.split("#")[0] + f"#/messages/{ident}")
    expect(page.locator("#md-heading")).to_be_visible()
    return page


def test_send_now_clicked_twice_posts_once(
    open_page: Callable[..., Page], api: Any, slack: SlackStandIn, db: firestore.Client
) -> None:
    status, created = call(api, "POST", "/messages", ONE_OFF)
    assert status == 201
    first = open_message(open_page, created["id"])
    second = open_message(open_page, created["id"])  # a second tab, opened before the send
    first.get_by_role("button", name="Send now").dblclick()
    expect(first.get_by_role("status").filter(has_text="Sent: the occurrence")).to_be_visible()
    second.get_by_role("button", name="Send now").click()
    expect(second.get_by_role("alert").filter(has_text="Not sent again")).to_be_visible()
    assert [post.text for post in slack.posts()] == [ONE_OFF["text"]]
    assert message(db, created["id"])["status"] == "sent"
    # The view shows the send; no action is offered for an occurrence that is gone.
    expect(first.locator(".message-detail .status").first).to_have_text("sent")
    expect(first.get_by_role("button", name="Send now")).to_have_count(0)


def test_skip_next_and_edit_only_this_occurrence(
    open_page: Callable[..., Page], api: Any, db: firestore.Client
) -> None:
    status, created = call(api, "POST", "/messages", SERIES)
    assert status == 201
    page = open_message(open_page, created["id"])
    # T0 is Monday 10:00 Berlin: the next is Wednesday 6 Jan 09:30; skipped, Monday 11 Jan.
    detail = page.locator(".message-detail")
    expect(detail).to_contain_text("6 Jan 2027, 09:30 CET")
    page.get_by_role("button", name="Skip next").click()
    expect(page.get_by_role("status").filter(has_text="Skipped the occurrence")).to_be_visible()
    expect(detail.locator("dl")).to_contain_text("11 Jan 2027, 09:30 CET")
    page.get_by_role("button", name="Edit only this occurrence").click()
    page.get_by_label("Text of this occurrence").fill("Stand-up, moved to ten")
    page.locator(".occurrence-edit").get_by_label("Time").fill("10:00")
    page.get_by_role("button", name="Save this occurrence").click()
    expect(page.get_by_role("status").filter(has_text="is now its own message")).to_be_visible()
    series = message(db, created["id"])
    assert len(series["exdates"]) == 2  # the skipped one and the edited one
    docs = db.collection(MESSAGES).stream()
    one_offs = [doc.to_dict() or {} for doc in docs if doc.id != created["id"]]
    assert [(m["text"], m["series_id"]) for m in one_offs] == [
        ("Stand-up, moved to ten", created["id"])
    ]
    assert one_offs[0]["send_at"].isoformat() == "2027-01-11T09:00:00+00:00"


def test_a_test_dm_to_a_chosen_person_arrives_marked_as_a_test(
    open_page: Callable[..., Page], api: Any, slack: SlackStandIn, db: firestore.Client
) -> None:
    slack.seed_workspace()
    status, created = call(api, "POST", "/messages", ONE_OFF)
    assert status == 201
    page = open_message(open_page, created["id"])
    page.get_by_role("button", name="Send a test to me").click()
    # The admin token is nobody's Slack account: the page asks who gets the test.
    person = page.get_by_role("combobox", name="Send the test to")
    person.fill("ana")
    expect(page.get_by_role("option", name="@Ana García")).to_be_visible()
    person.press("ArrowDown")
    person.press("Enter")
    expect(person).to_have_value("@Ana García")
    page.get_by_role("button", name="Send test").click()
    expect(page.get_by_role("status").filter(has_text="Test sent to @Ana García")).to_be_visible()
    [post] = slack.posts()
    assert post.channel in (ANA, slack.dm_channel(ANA))
    assert "test" in (post.text or "").lower()
    assert message(db, created["id"]).get("sent_count", 0) == 0
    assert db.collection(DELIVERIES).get() == []


def test_a_not_in_channel_failure_says_what_to_do_and_retry_sends_it(
    open_page: Callable[..., Page],
    api: Any,
    tick_app: Any,
    slack: SlackStandIn,
    watched: dict[int, Watched],
) -> None:
    slack.seed_workspace()
    assert call(api, "GET", "/directory/channels")[0] == 200  # the names, cached
    slack.set_channel(GENERAL, member=False)  # nobody invited the app yet
    body = ONE_OFF | {"channel": GENERAL, "text": "Release notes are out"}
    status, created = call(api, "POST", "/messages", body)
    assert status == 201
    due = T0 + timedelta(hours=3, minutes=1)  # ONE_OFF is due at 12:00 UTC
    answer(tick(tick_app.test_client(), headers=bearer(), body=at(due)), 200)
    assert slack.posts() == []
    page = open_page()
    page.get_by_role("button", name="Show").click()
    row = page.locator(f'li.message[data-id="{created["id"]}"]')
    words = "Invite the app: /invite @Scheduler in #general, then Retry"
    expect(row.locator(".reason")).to_contain_text(words)
    row.get_by_role("link", name="Details and actions").click()
    expect(page.locator(".message-detail .help")).to_contain_text(words)
    expect(page.locator(".message-detail h2")).to_contain_text("#general")
    screenshot(page, "not-in-channel")
    slack.set_channel(GENERAL, member=True)  # /invite @Scheduler, as it says
    page.get_by_role("button", name="Retry").click()
    expect(page.locator(".message-detail .status").first).to_have_text("sent")
    assert [post.text for post in slack.posts()] == ["Release notes are out"]
    assert watched[id(page)].errors == []
