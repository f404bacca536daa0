"""The message form's "Send to: Microsoft Teams" in a real browser against the real `api`
target: the conversations the app is installed in, offered by name (a removed one is not),
names kept inert."""

from __future__ import annotations

from collections.abc import Callable

from google.cloud import firestore
from playwright.sync_api import Page, expect

from core.documents.teams_conversations import (
    ConversationType,
    Place,
    record_install,
    record_removal,
)
from core.store import MESSAGES
from tests.fixtures.clock import T0
from tests.web.conftest import Watched
from tests.web.form import fill_when

XSS_NAME = "Ops <img src=x onerror=alert(1)>"


def install(db: firestore.Client, ident: str, name: str, kind: ConversationType) -> None:
    place = Place("https://smba.trafficmanager.net/emea/", "tenant-1", kind, name)
    record_install(db, ident, place, None, T0)


def test_the_form_offers_the_installed_teams_conversations_by_name(
    open_page: Callable[..., Page], db: firestore.Client, watched: dict[int, Watched]
) -> None:
    install(db, "19:standups@thread.tacv2", "Platform / standups", ConversationType.CHANNEL)
    install(db, "a:1ana", "Ana Lima", ConversationType.PERSONAL)
    install(db, "19:xss@thread.v2", XSS_NAME, ConversationType.GROUP_CHAT)
    install(db, "19:gone@thread.tacv2", "Platform / gone", ConversationType.CHANNEL)
    record_removal(
        db, "19:gone@thread.tacv2", Place("u", "t", ConversationType.CHANNEL, "x"), None, T0
    )
    page = open_page()

    page.get_by_label("Microsoft Teams").check()

    choice = page.get_by_label("Teams conversation", exact=True)
    expect(choice).to_be_visible()
    expect(page.locator("#m-channel")).to_be_hidden()
    expect(choice.locator("option")).to_have_text(
        [
            "Choose a conversation",
            "Ana Lima (personal chat)",
            f"{XSS_NAME} (group chat)",
            "Platform / standups (channel)",
        ]
    )
    choice.select_option(label="Platform / standups (channel)")
    expect(choice).to_have_value("19:standups@thread.tacv2")
    assert watched[id(page)].dialogs == []
    assert watched[id(page)].errors == []


def test_a_teams_conversation_picked_in_the_channel_list_is_stored_as_one(
    open_page: Callable[..., Page], db: firestore.Client
) -> None:
    install(db, "19:standups@thread.tacv2", "Platform / standups", ConversationType.CHANNEL)
    page = open_page()
    channel = page.get_by_role("combobox", name="Channel", exact=True).first
    channel.fill("standups")
    page.get_by_role("option", name="Platform / standups (Microsoft Teams)").click()
    expect(channel).to_have_value("Platform / standups")
    page.get_by_label("Message", exact=True).fill("Stand-up notes")
    fill_when(page, "2027-01-04 12:30")
    page.get_by_role("button", name="Schedule").click()
    row = page.locator("li.message").filter(has_text="Stand-up notes")
    expect(row.locator("h3")).to_contain_text("Platform / standups")
    [doc] = db.collection(MESSAGES).get()
    stored = doc.to_dict() or {}
    assert (stored.get("teams_conversation"), "channel" in stored) == (
        "19:standups@thread.tacv2",
        False,
    )
