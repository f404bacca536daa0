"""The Agenda in a real browser on the real `api` target: the next 7 days across messages and
rotation turns in the API's order, grouped by the viewer's day with the schedule's own time
beside the viewer's, names instead of ids, the search and a chosen range (kept by a reload),
and each item's link to its record."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from playwright.sync_api import Page, expect

from tests.fixtures.api import call
from tests.fixtures.messages import SERIES
from tests.fixtures.rotations import BOB, ROTATION, create
from tests.web.conftest import Watched, screenshot
from tests.web.workspace import name_workspace

PHONE = {"width": 375, "height": 800}
# T0 is Monday 4 Jan 2027 10:00 in Berlin, 04:00 for the New York viewer.
DEPLOY = {
    "channel": "C0123ABCD",
    "text": "Deploy at noon",
    "timezone": "Europe/Berlin",
    "send_at": "2027-01-04T13:00:00+01:00",  # 07:00 in New York
}
# Mondays and Wednesdays 11:00 Berlin (05:00 New York): Mon 4 and Wed 6 Jan in the 7 days.
STANDUP = {
    **SERIES,
    "text": "Stand-up notes",
    "rrule": "FREQ=WEEKLY;BYDAY=MO,WE;BYHOUR=11;BYMINUTE=0",
    "dtstart": "2027-01-01T11:00",
}


def seed(api: Any, db: Any) -> dict[str, str]:
    name_workspace(db)
    ids = {}
    for key, body in (("deploy", DEPLOY), ("standup", STANDUP)):
        status, answer = call(api, "POST", "/messages", body)
        assert status == 201, answer
        ids[key] = answer["id"]
    ids["rotation"] = create(api, ROTATION)["id"]  # weekdays 09:30 Berlin, 03:30 New York
    return ids


def agenda(page: Page) -> Any:
    page.get_by_role("link", name="Agenda").click()
    section = page.locator("#agenda")
    expect(section.get_by_role("heading", name="Agenda", exact=True)).to_be_visible()
    return section


def shown(section: Any) -> list[str]:
    return [
        str(i)
        for i in section.locator(".agenda-item").evaluate_all("l => l.map(e => e.dataset.id)")
    ]


def test_the_next_7_days_across_messages_and_turns_in_order_by_the_viewers_day(
    open_page: Callable[..., Page], watched: dict[int, Watched], api: Any, db: Any
) -> None:
    ids = seed(api, db)
    status, expected = call(api, "GET", "/agenda")
    assert status == 200
    items = expected["items"]
    page = open_page()
    section = agenda(page)

    expect(section.locator(".agenda-item")).to_have_count(len(items))
    assert shown(section) == [item["id"] for item in items]
    days = section.locator(".agenda-day")
    expect(days.first.locator("h3")).to_contain_text("4 January 2027")
    # Monday in New York: the stand-up at 05:00 (11:00 in Berlin), then the deploy at 07:00.
    monday = days.first.locator(".agenda-item")
    expect(monday).to_have_count(2)
    expect(monday.nth(0)).to_contain_text("05:00")
    expect(monday.nth(0)).to_contain_text("11:00 Europe/Berlin")
    expect(monday.nth(0).get_by_role("link")).to_have_text("Message to #ops")
    expect(monday.nth(0)).to_contain_text("Stand-up notes")
    expect(monday.nth(1)).to_contain_text("07:00")
    expect(monday.nth(1)).to_contain_text("Deploy at noon")
    # Tuesday: the rotation's turn, by the member's name, linked to the rotation.
    turn = days.nth(1).locator(".agenda-item").first
    expect(turn).to_contain_text("03:30")
    expect(turn).to_contain_text("09:30 Europe/Berlin")
    expect(turn.get_by_role("link")).to_have_text(f"Turn of {names_of(items, 'rotation')} in #ops")
    assert "U0" not in section.inner_text()  # names, never ids
    screenshot(page, "agenda")

    turn.get_by_role("link").click()
    expect(page).to_have_url(f"{page.url.split('#')[0]}#/rotations/{ids['rotation']}")
    expect(page.locator("#rotations form.rot-form").get_by_label("Name", exact=True)).to_have_value(
        "On-call"
    )
    assert watched[id(page)].errors == []


def names_of(items: list[dict[str, Any]], kind: str) -> str:
    first = next(item for item in items if item["kind"] == kind)
    return str(first["names"][first["member"]])


def test_search_and_a_chosen_range_narrow_it_and_a_reload_keeps_them(
    open_page: Callable[..., Page], watched: dict[int, Watched], api: Any, db: Any
) -> None:
    ids = seed(api, db)
    page = open_page(PHONE)
    section = agenda(page)
    expect(section.locator(".agenda-item").first).to_be_visible()

    section.get_by_label("Search", exact=True).fill("stand-up")
    expect(section.locator(".agenda-item")).to_have_count(2)  # Mon 4, Wed 6 (Mon 11 is past 7 days)
    assert set(shown(section)) == {ids["standup"]}
    section.get_by_label("Search", exact=True).fill("Bob Brown")  # a person, by name
    _, by_person = call(api, "GET", "/agenda?q=Bob%20Brown")
    assert by_person["items"] and {i["member"] for i in by_person["items"]} == {BOB}
    expect(section.locator(".agenda-item")).to_have_count(len(by_person["items"]))

    section.get_by_label("Search", exact=True).fill("")
    section.get_by_label("From", exact=True).fill("2027-01-06")
    section.get_by_label("To (inclusive)", exact=True).fill("2027-01-06")
    # Wednesday in New York: the turn at 03:30, the stand-up at 05:00.
    expect(section.locator(".agenda-day")).to_have_count(1)
    expect(section.locator(".agenda-item")).to_have_count(2)
    assert shown(section) == [ids["rotation"], ids["standup"]]

    page.reload()
    section = page.locator("#agenda")
    expect(section.get_by_label("From", exact=True)).to_have_value("2027-01-06")
    expect(section.locator(".agenda-item")).to_have_count(2)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    screenshot(page, "agenda-375")
    # A link to an agenda with another search, followed in the open tab.
    page.goto(f"{page.url.split('#')[0]}#/agenda?q=deploy")
    expect(section.get_by_label("Search", exact=True)).to_have_value("deploy")
    expect(section.locator(".agenda-item")).to_have_count(1)
    assert shown(section) == [ids["deploy"]]
    assert watched[id(page)].errors == []
