"""The Rotations section in a real browser on the real `api` target: reorder members with the
keyboard and see the preview follow, the history of posted days, a stale edit from a second
tab, a keyboard create with a 422 shown next to its field, and user text that stays text."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from playwright.sync_api import Page, expect

from processor.kind_pass import run_kind
from rotations.kind import ROTATION_DAY_KIND
from tests.fixtures.api import call
from tests.fixtures.rotations import ALICE, BOB, CAROL, ROTATION, create
from tests.web.conftest import Watched, screenshot
from tests.web.workspace import name_workspace

PHONE = {"width": 375, "height": 800}
XSS_NAME = "<img src=x onerror=alert(1)>"
XSS_TEXT = "<script>alert(2)</script> {member} <img src=x onerror=alert(3)>"
# At T0 (Monday 10:00 Berlin) Monday's turn, Alice's, is still to be posted; then Bob's…
TURNS_BEFORE = ["@Alice Adams", "@Bob Brown", "@Carol Chen", "@Alice Adams", "@Bob Brown"]
TURNS_AFTER = ["@Alice Adams", "@Carol Chen", "@Bob Brown", "@Alice Adams", "@Carol Chen"]


def rotations(page: Page) -> Any:
    page.get_by_role("link", name="Rotations").click()
    section = page.locator("#rotations")
    expect(section.get_by_role("heading", name="Rotations", exact=True)).to_be_visible()
    return section


def open_rotation(page: Page, name: str) -> Any:
    section = rotations(page)
    section.get_by_role("link", name=name, exact=True).click()
    expect(section.get_by_role("button", name="Save changes")).to_be_visible()
    return section


def expect_turns(section: Any, members: list[str]) -> None:
    """The preview lists these members, in order (waiting for a reload to finish)."""
    expect(section.locator(".rot-turn-member")).to_have_text(members)


def press(page: Page, control: Any, key: str = "Enter") -> None:
    control.focus()
    page.keyboard.press(key)


def fits(page: Page) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


def test_reordering_with_the_keyboard_changes_the_previewed_turns(
    open_page: Callable[..., Page], watched: dict[int, Watched], api: Any, rt: Any
) -> None:
    created = create(api, ROTATION)
    assert run_kind(rt, ROTATION_DAY_KIND)["sent"] == 1  # Monday: Alice; Bob is next
    page = open_page(PHONE)
    section = open_rotation(page, "On-call")
    expect_turns(section, [BOB, CAROL, ALICE, BOB, CAROL])
    history = section.locator("table.history tbody tr")
    expect(history).to_have_count(1)
    expect(history.first).to_contain_text("2027-01-04")
    expect(history.first).to_contain_text(ALICE)
    expect(history.first).to_contain_text("sent")

    press(page, section.get_by_role("button", name="Move Member 3 up"))  # Carol before Bob
    # The keyboard stays on Carol's buttons, now at position 2.
    expect(section.get_by_role("button", name="Move Member 2 up")).to_be_focused()
    expect(section.locator('input[name^="members."]').nth(1)).to_have_value(CAROL)
    screenshot(page, "rotations-reordered-375")
    press(page, section.get_by_role("button", name="Save changes"))

    # Bob stays next (the API's fairness rule); after him the new order: Alice, then Carol.
    expect(page.locator("#rotations .notice")).to_contain_text("saved")
    expect_turns(section, [BOB, ALICE, CAROL, BOB, ALICE])
    assert call(api, "GET", f"/rotations/{created['id']}")[1]["members"] == [ALICE, CAROL, BOB]
    assert fits(page)
    screenshot(page, "rotations-preview-375")
    assert watched[id(page)].errors == []


def test_a_stale_edit_in_a_second_tab_says_someone_changed_it(
    open_page: Callable[..., Page], watched: dict[int, Watched], api: Any
) -> None:
    created = create(api, ROTATION)
    first, second = open_page(), open_page()
    one, two = open_rotation(first, "On-call"), open_rotation(second, "On-call")

    one.get_by_label("Name").fill("On-call (first tab)")
    one.get_by_role("button", name="Save changes").click()
    expect(first.locator("#rotations .notice")).to_contain_text("saved")
    two.get_by_label("Name").fill("On-call (second tab)")
    two.get_by_role("button", name="Save changes").click()

    alert = two.get_by_role("alert")
    expect(alert).to_contain_text("Someone changed this rotation")
    screenshot(second, "rotations-stale-edit")
    assert call(api, "GET", f"/rotations/{created['id']}")[1]["name"] == "On-call (first tab)"
    alert.get_by_role("button", name="Reload").click()
    expect(two.get_by_label("Name")).to_have_value("On-call (first tab)")
    assert watched[id(first)].errors == watched[id(second)].errors == []


def test_a_keyboard_create_shows_the_422_by_its_field_and_keeps_user_text_inert(
    open_page: Callable[..., Page], watched: dict[int, Watched], api: Any
) -> None:
    page = open_page(PHONE)
    section = rotations(page)
    press(page, section.get_by_role("button", name="New rotation"))
    form = section.locator("form")
    for label, value in [
        ("Name", XSS_NAME),
        ("Channel", "C0123ABCD"),
        ("Message", XSS_TEXT),
        ("Timezone", "Europe/Berlin"),
    ]:
        form.get_by_label(label, exact=True).fill(value)
    for member in (ALICE, "not-a-user", CAROL):
        press(page, form.get_by_label("New member", exact=True))
        page.keyboard.type(member)
        page.keyboard.press("Enter")
    press(page, form.get_by_role("button", name="Create rotation"))

    # The API's 422 names members.1: its message sits right after that member's field.
    member = form.get_by_label("Member 2", exact=True)
    expect(member).to_have_attribute("aria-invalid", "true")
    problem = form.locator(".rot-member .field + .problem")
    expect(problem).to_contain_text("not-a-user")
    screenshot(page, "rotations-create-422-375")
    press(page, form.get_by_role("button", name="Remove Member 2"))
    press(page, form.get_by_role("button", name="Create rotation"))

    expect(page.locator("#rotations .notice")).to_contain_text("created")
    expect(section.get_by_role("link", name=XSS_NAME, exact=True)).to_be_visible()
    expect(section.locator(".rot-turn-member").first).to_have_text(ALICE)
    expect(section.locator(".rot-post")).to_contain_text("&lt;script&gt;")
    listed = call(api, "GET", "/rotations")[1]["rotations"]
    assert [(r["name"], r["text"], r["members"]) for r in listed] == [
        (XSS_NAME, XSS_TEXT, [ALICE, CAROL])
    ]
    # Inert: no element was made from the text, no script ran, nothing was fetched for it.
    assert page.locator("#rotations img, #rotations script").count() == 0
    assert watched[id(page)].dialogs == []
    assert watched[id(page)].errors == []
    assert fits(page)
    screenshot(page, "rotations-created-375")


def test_the_history_shows_a_skipped_day_and_why(
    open_page: Callable[..., Page], watched: dict[int, Watched], api: Any, rt: Any, clock: Any
) -> None:
    create(api, {**ROTATION, "skips": {"2027-01-05": [ALICE, BOB, CAROL]}})
    assert run_kind(rt, ROTATION_DAY_KIND)["sent"] == 1  # Monday: Alice
    clock.advance(timedelta(days=1))
    run_kind(rt, ROTATION_DAY_KIND)  # Tuesday: everyone is out

    section = open_rotation(open_page(PHONE), "On-call")

    days = section.locator("table.history tbody tr")
    expect(days).to_have_count(2)
    expect(days.nth(0)).to_contain_text("2027-01-05")
    expect(days.nth(0)).to_contain_text("skipped")
    expect(days.nth(0)).to_contain_text("every member was out")
    expect(days.nth(1)).to_contain_text("2027-01-04")
    expect(days.nth(1)).to_contain_text(ALICE)
    expect(days.nth(1)).to_contain_text("sent")
    assert watched[id(section.page)].errors == []


def test_the_preview_shows_the_posts_buttons_with_their_labels_as_text(
    open_page: Callable[..., Page], watched: dict[int, Watched], api: Any
) -> None:
    actions = [{"id": "skip_today", "label": "Skip me today"}, {"id": "x", "label": XSS_NAME}]
    create(api, {**ROTATION, "actions": actions})

    section = open_rotation(open_page(PHONE), "On-call")

    buttons = section.locator(".rot-post-buttons button")
    expect(buttons).to_have_text(["Skip me today", XSS_NAME])
    expect(buttons.first).to_be_disabled()
    assert section.locator(".rot-post-buttons img").count() == 0
    assert watched[id(section.page)].errors == []


def test_a_skip_dates_remove_button_is_named_with_its_visible_label(
    open_page: Callable[..., Page], api: Any
) -> None:
    create(api, {**ROTATION, "skips": {"2027-01-05": [ALICE]}})
    section = open_rotation(open_page(PHONE), "On-call")

    remove = section.locator(".rot-skip button")
    # What a speech-input user says ("click Remove") is in the name a screen reader reads.
    expect(remove).to_have_accessible_name("Remove skip date 1")
    assert remove.inner_text().strip().lower() in "remove skip date 1"
    remove.click()
    expect(section.get_by_label("Skip date 1")).to_have_count(0)


def up_next(section: Any) -> Any:
    return section.locator(".rot-up-next")


def test_a_swap_gives_each_member_the_others_next_turn_and_the_api_agrees(
    open_page: Callable[..., Page], watched: dict[int, Watched], api: Any, db: Any
) -> None:
    name_workspace(db)
    created = create(api, ROTATION)
    section = open_rotation(open_page(PHONE), "On-call")
    expect(section.locator(".rot-up-today")).to_contain_text("@Alice Adams")
    expect(up_next(section)).to_contain_text("@Bob Brown")
    expect(up_next(section)).to_contain_text("5 Jan 2027, 09:30 CET (yours: 5 Jan 2027, 03:30")
    expect(section.locator(".rot-turn-member")).to_have_text(TURNS_BEFORE)

    swap = section.get_by_role("form", name="Swap two members' turns")
    swap.get_by_label("First member").select_option(label="@Bob Brown")
    swap.get_by_label("Second member").select_option(label="@Carol Chen")
    swap.get_by_role("button", name="Swap turns").click()

    expect(section.page.locator("#rotations .notice")).to_contain_text("Swapped")
    expect(up_next(section)).to_contain_text("@Carol Chen")
    expect(section.locator(".rot-turn-member")).to_have_text(TURNS_AFTER)
    stored = call(api, "GET", f"/rotations/{created['id']}")[1]
    assert stored["members"] == [ALICE, CAROL, BOB]
    assert stored["up"]["next"]["member"] == CAROL
    assert fits(section.page)
    screenshot(section.page, "rotations-swapped-375")
    assert watched[id(section.page)].errors == []


def test_an_away_period_passes_the_member_over_in_up_next(
    open_page: Callable[..., Page], watched: dict[int, Watched], api: Any, db: Any
) -> None:
    name_workspace(db)
    created = create(api, ROTATION)
    section = open_rotation(open_page(), "On-call")
    expect(up_next(section)).to_contain_text("@Bob Brown")

    section.get_by_role("button", name="Add an away period").click()
    period = section.get_by_role("group", name="Away period 1")
    period.get_by_label("Away period 1: member").select_option(label="@Bob Brown")
    period.get_by_label("From").fill("2027-01-05")
    period.get_by_label("To (inclusive)").fill("2027-01-06")
    section.get_by_role("button", name="Save changes").click()

    expect(section.page.locator("#rotations .notice")).to_contain_text("saved")
    expect(up_next(section)).to_contain_text("@Carol Chen")  # Tuesday's turn passes Bob over
    expect(section.get_by_label("Away period 1: member")).to_have_value(BOB)
    stored = call(api, "GET", f"/rotations/{created['id']}")[1]
    assert stored["away"] == [{"member": BOB, "from": "2027-01-05", "to": "2027-01-06"}]
    assert stored["up"]["next"]["member"] == CAROL
    screenshot(section.page, "rotations-away")
    assert watched[id(section.page)].errors == []


def test_a_rotation_made_with_names_and_the_shared_schedule_controls(
    open_page: Callable[..., Page], watched: dict[int, Watched], api: Any, db: Any
) -> None:
    name_workspace(db)
    page = open_page(PHONE)
    section = rotations(page)
    section.get_by_role("button", name="New rotation").click()
    form = section.locator("form.rot-form")
    form.get_by_label("Name", exact=True).fill("Stand-up host")
    channel = form.get_by_role("combobox", name="Channel", exact=True)
    channel.fill("op")
    section.get_by_role("option", name="#ops").click()
    for typed, name in (("car", "@Carol Chen"), ("ali", "@Alice Adams")):
        form.get_by_role("combobox", name="New member", exact=True).fill(typed)
        section.get_by_role("option", name=name).click()
        form.get_by_role("button", name="Add member").click()
    form.get_by_label("Timezone", exact=True).fill("Europe/Berlin")
    form.get_by_label("Repeat", exact=True).select_option(label="Weekly, on chosen days")
    # Weekly starts from the days the rotation had (Monday to Friday): keep Tuesday, Thursday.
    for day in ("Monday", "Wednesday", "Friday"):
        form.get_by_label(day).uncheck()
    form.get_by_label("Time", exact=True).fill("09:15")
    expect(form.locator(".rot-member-name")).to_have_text(["@Carol Chen", "@Alice Adams"])
    form.get_by_role("button", name="Create rotation").click()

    expect(page.locator("#rotations .notice")).to_contain_text("created")
    [stored] = call(api, "GET", "/rotations")[1]["rotations"]
    assert (stored["channel"], stored["members"]) == ("C0123ABCD", [CAROL, ALICE])
    assert (stored["weekdays"], stored["send_time"]) == ([1, 3], "09:15")
    # Reopened, the controls read the stored schedule back, by name and in words.
    form = section.locator("form.rot-form")
    expect(form.get_by_role("combobox", name="Channel", exact=True)).to_have_value("#ops")
    expect(form.get_by_label("Repeat", exact=True)).to_have_value("weekly")
    expect(form.get_by_label("Tuesday")).to_be_checked()
    expect(form.get_by_label("Time", exact=True)).to_have_value("09:15")
    expect(form.locator(".words")).to_have_text(stored["schedule_text"])
    assert fits(page)
    screenshot(page, "rotations-by-name-375")
    assert watched[id(page)].errors == []
