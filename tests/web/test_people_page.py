"""The People section and a message to a person, in a real browser against the real `api`
target: a person's preferences shown and changed, a must-read category that cannot be
unticked, a 422 by the box it names, and the message form's "Send to" and category."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.cloud import firestore
from playwright.sync_api import Page, expect

from core.documents.categories import CategoryField
from core.documents.preferences import PreferenceField
from core.store import CATEGORIES, MESSAGES, PREFERENCES
from tests.fixtures.rotations import CAROL
from tests.web.conftest import Watched, screenshot
from tests.web.form import fill_when
from tests.web.workspace import name_workspace

PHONE = {"width": 375, "height": 800}
PERSON = "U0PERSON1"
XSS_LABEL = "Tips <img src=x onerror=alert(1)>"


def seed(db: firestore.Client) -> None:
    categories = db.collection(CATEGORIES)
    categories.document("nudges").set({CategoryField.LABEL: "Nudges"})
    categories.document("security").set(
        {CategoryField.LABEL: "Security notices", CategoryField.OPT_OUT_ALLOWED: False}
    )
    categories.document("tips").set({CategoryField.LABEL: XSS_LABEL})
    db.collection(PREFERENCES).document(PERSON).set({PreferenceField.OPTED_OUT: ["tips"]})


def people(page: Page, user: str) -> Any:
    page.get_by_role("link", name="People").click()
    section = page.locator("#people")
    section.get_by_label("Slack user id").fill(user)
    section.get_by_role("button", name="Show preferences").click()
    return section


def opted_out(db: firestore.Client) -> Any:
    return (db.collection(PREFERENCES).document(PERSON).get().to_dict() or {}).get("opted_out")


def test_a_person_sees_and_changes_what_they_receive_but_not_a_must_read_category(
    open_page: Callable[..., Page], watched: dict[int, Watched], db: firestore.Client
) -> None:
    seed(db)
    page = open_page(PHONE)
    section = people(page, "C0123ABCD")
    expect(section.locator(".problem")).to_contain_text("not a Slack user id")
    section = people(page, PERSON)

    expect(section.get_by_role("heading", name=f"Preferences of {PERSON}")).to_be_visible()
    nudges = section.get_by_label("Nudges")
    must_read = section.get_by_label("Security notices")
    tips = section.get_by_label(XSS_LABEL)
    expect(nudges).to_be_checked()
    expect(tips).not_to_be_checked()
    expect(must_read).to_be_checked()
    expect(must_read).to_be_disabled()
    expect(must_read).to_have_accessible_description(
        "Must-read: nobody can opt out of this category."
    )
    screenshot(page, "people-375")

    nudges.uncheck()
    tips.check()
    section.get_by_role("button", name="Save preferences").click()

    expect(section.get_by_role("status").filter(has_text="Saved")).to_contain_text(
        "opted out of 1 category"
    )
    assert opted_out(db) == ["nudges"]
    expect(section.get_by_label("Nudges")).not_to_be_checked()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert watched[id(page)].dialogs == [] and watched[id(page)].errors == []


def test_a_422_shows_by_the_box_of_the_category_it_names(page: Page, db: firestore.Client) -> None:
    seed(db)
    section = people(page, PERSON)
    expect(section.get_by_label("Nudges")).to_be_checked()
    db.collection(CATEGORIES).document("nudges").delete()  # another operator, meanwhile

    section.get_by_label("Nudges").uncheck()
    section.get_by_role("button", name="Save preferences").click()

    expect(section.locator(".problem")).to_have_text("'nudges' is not a category")
    expect(section.get_by_label("Nudges")).to_have_attribute("aria-invalid", "true")
    assert opted_out(db) == ["tips"]


def test_a_message_to_a_person_with_a_category_is_stored_with_user_and_category(
    open_page: Callable[..., Page], db: firestore.Client
) -> None:
    seed(db)
    page = open_page()  # the form lists the categories there are when it opens
    page.get_by_label("A person").check()
    expect(page.get_by_label("Channel", exact=True).first).to_be_hidden()
    page.get_by_label("Person", exact=True).fill(PERSON)
    page.get_by_label("Category").select_option(label="Nudges")
    page.get_by_label("Message", exact=True).fill("Your expense report is due")
    page.get_by_label("Timezone", exact=True).fill("Europe/Berlin")
    fill_when(page, "2027-01-04 12:30")
    page.get_by_role("button", name="Schedule").click()

    expect(page.get_by_role("status").filter(has_text="Scheduled: message")).to_be_visible()
    stored = [doc.to_dict() or {} for doc in db.collection(MESSAGES).stream()]
    assert [(d["user"], d["category"], "channel" in d) for d in stored] == [
        (PERSON, "nudges", False)
    ]
    expect(page.locator("li.message").filter(has_text="Your expense report")).to_contain_text(
        PERSON
    )


def test_with_no_category_there_is_nothing_to_save_and_the_page_says_how_to_make_one(
    page: Page,
) -> None:
    section = people(page, PERSON)

    expect(section.get_by_role("heading", name=f"Preferences of {PERSON}")).to_be_visible()
    expect(section.get_by_text("No categories exist yet")).to_contain_text(
        "categories/{id} document"
    )
    expect(section.get_by_role("button", name="Save preferences")).to_be_hidden()


def test_the_workspaces_people_are_listed_by_name_and_one_is_picked_by_name(
    open_page: Callable[..., Page], watched: dict[int, Watched], db: firestore.Client
) -> None:
    seed(db)
    name_workspace(db)
    page = open_page(PHONE)
    page.get_by_role("link", name="People").click()
    section = page.locator("#people")
    people_list = section.get_by_role("list", name="People")
    expect(people_list.get_by_role("button")).to_have_text(
        ["Alice Adams", "Bob Brown", "Carol Chen"]
    )

    section.get_by_label("Find a person").fill("car")
    expect(people_list.get_by_role("button")).to_have_text(["Carol Chen"])
    people_list.get_by_role("button", name="Carol Chen").click()

    expect(section.get_by_role("heading", name="Preferences of Carol Chen")).to_be_focused()
    expect(section.get_by_label("Nudges")).to_be_checked()
    section.get_by_label("Nudges").uncheck()
    section.get_by_role("button", name="Save preferences").click()
    expect(section.get_by_role("status").filter(has_text="Saved")).to_contain_text("Carol Chen")
    assert (db.collection(PREFERENCES).document(CAROL).get().to_dict() or {})["opted_out"] == [
        "nudges"
    ]
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert watched[id(page)].errors == []
