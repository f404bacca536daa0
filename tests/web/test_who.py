"""Who did what, in a real browser against the real `api` target: a message's own view and
the list show who made it ("Created by", a Slack user by name) and who last changed it
("Last changed by": `admin` for the admin token)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from playwright.sync_api import Page, expect

from composer.messages import create_message
from composer.models import MessageDraft
from core.runtime import Runtime
from emulator.slack_standin import SlackStandIn
from tests.fixtures.api import call
from tests.fixtures.messages import ONE_OFF

ANA = "U0ANAGARCIA"  # Ana García in the stand-in's seeded workspace


def test_the_view_and_the_list_show_who_made_and_last_changed_a_message(
    open_page: Callable[..., Page], api: Any, rt: Runtime, slack: SlackStandIn
) -> None:
    slack.seed_workspace()
    assert call(api, "GET", "/directory/users")[0] == 200  # people's names cached
    draft = MessageDraft.model_validate_json(json.dumps(ONE_OFF))
    mid = create_message(rt, draft, None, by=ANA)["id"]  # as the Slack side makes it
    assert call(api, "PUT", f"/messages/{mid}", {"text": "Deploy at one"})[0] == 200

    page = open_page()
    row = page.locator("li.message").filter(has_text="Deploy at one")
    expect(row).to_contain_text("Created by@Ana García")
    expect(row).to_contain_text("Last changed byadmin")

    page.goto(page.url.split("#")[0] + f"#/messages/{mid}")
    facts = page.locator(".message-detail dl")
    expect(facts.locator("dt", has_text="Created by")).to_be_visible()
    expect(facts.locator("dt:text-is('Created by') + dd .name")).to_contain_text("@Ana García")
    expect(facts.locator("dt:text-is('Last changed by') + dd")).to_have_text("admin")
    facts.get_by_role("button", name="id of @Ana García").click()
    expect(facts.locator("dt:text-is('Created by') + dd code")).to_have_text(ANA)
