"""The Home tab (issue 33): a person's own messages in words, their rotations and who is up,
their preference toggles; its buttons, signed as Slack signs a `block_actions` on a view,
act through the API's code paths only for the message's creator or a SLACK_ADMINS id, and
the tab is published again after each."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from core.models import message_delivery_id
from emulator.slack_clicks import form_body
from emulator.slack_native import app_home_opened
from interactions.home import publish_home
from interactions.home_view import send_now_value as send_value
from targets.kinds import run_pass
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.interactions import SECRET, send
from tests.fixtures.messages import SERIES, message, seed_message
from tests.fixtures.people import seed_category, to_person
from tests.fixtures.rotations import seed_rotation
from tests.fixtures.slack_native import event

ANA, BEN = "U0ANA1234", "U0BEN5678"
LATER = T0 + timedelta(days=2)


def mine(db: Any, user: str = ANA, **fields: Any) -> str:
    """A one-off created by `user`, due two days after T0."""
    values: dict[str, Any] = {"created_by": user, "send_at": LATER, "next_run_at": LATER}
    values |= fields
    return seed_message(db, **values)


def tab_text(view: dict[str, Any] | None) -> str:
    """Every text the person sees on the tab, one block a line."""
    assert view is not None and view["type"] == "home"
    lines = []
    for block in view["blocks"]:
        texts = [block.get("text"), *block.get("elements", []), block.get("accessory")]
        lines.append(
            " | ".join(
                t["text"] if isinstance(t.get("text"), str) else t["text"]["text"]
                for t in texts
                if isinstance(t, dict) and "text" in t
            )
        )
    return "\n".join(lines)


def button(view: dict[str, Any] | None, action_id: str, value: str) -> dict[str, Any]:
    assert view is not None
    for block in view["blocks"]:
        for element in [*block.get("elements", []), block.get("accessory")]:
            if isinstance(element, dict) and (element.get("action_id"), element.get("value")) == (
                action_id,
                value,
            ):
                return element
    raise AssertionError(f"no {action_id} button for {value} on the tab")


def press(
    clicks: Any, view: dict[str, Any] | None, user: str, pressed: dict[str, Any], **kw: Any
) -> Any:
    """`user` pressing `pressed` on their published Home tab, as Slack sends it."""
    assert view is not None
    payload = {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "team_id": "T0001"},
        "api_app_id": "A0001",
        "token": "legacy",
        "container": {"type": "view", "view_id": "V0HOME"},
        "trigger_id": "1.2.3",
        "team": {"id": "T0001", "domain": "example"},
        "view": {"id": "V0HOME", "team_id": "T0001", **view},
        "actions": [
            {
                "type": "button",
                "block_id": "b1",
                "action_id": pressed["action_id"],
                "value": pressed["value"],
                "text": pressed["text"],
                "action_ts": str(T0.timestamp()),
            }
        ],
    }
    return send(clicks, form_body(payload), T0, **kw)


def test_the_tab_lists_their_messages_in_words_their_rotations_and_their_toggles(rt, db, slack):
    first = datetime(2027, 1, 6, 8, 30, tzinfo=UTC)  # Wednesday 09:30 in Berlin
    series = mine(db, **SERIES, status="recurring", send_at=None, next_run_at=first)
    once = mine(db, text="Deploy at noon")
    seed_message(db, created_by=BEN, text="Ben's own reminder")
    mine(db, text="Long gone", status="sent")
    mine(db, text="Called off", status="cancelled", deleted=True)
    seed_rotation(db, "hosts", name="Stand-up host", members=[BEN, ANA])
    seed_rotation(db, "retro", name="Retro lead", members=[BEN], created_by=ANA)
    seed_rotation(db, "other", name="Not hers", members=[BEN])
    seed_category(db, "nudges")
    seed_category(db, "security", opt_out_allowed=False)

    assert publish_home(rt, ANA)

    text = tab_text(slack.home_view(ANA))
    assert "Stand-up" in text and "Deploy at noon" in text
    assert "*recurring* · next: Wed 6 Jan 2027 at 9:30 (Europe/Berlin)" in text
    assert "Every Monday and Wednesday at 9:30 (Europe/Berlin)" in text
    assert "*pending* · next: Wed 6 Jan 2027 at 9:00 (UTC)" in text
    assert "Ben's own reminder" not in text and "Long gone" not in text and "Called off" not in text
    assert "Stand-up host" in text and "Retro lead" in text and "Not hers" not in text
    assert f"Today: <@{BEN}> · Next: <@{ANA}> on Tue 5 Jan 2027 at 9:30 (Europe/Berlin)" in text
    assert "*Nudges*: you receive these | Opt out" in text and "Security" not in text
    view = slack.home_view(ANA)
    for mid, occurrence in ((series, first), (once, LATER)):
        button(view, "home_cancel", mid)
        button(view, "home_send_now", send_value(mid, occurrence))


def test_a_person_with_more_than_a_tab_holds_is_told_how_many_more(rt, db, slack):
    for n in range(40):
        mine(db, text=f"Reminder {n}", next_run_at=LATER + timedelta(minutes=n))

    assert publish_home(rt, ANA)  # the stand-in refuses a view of more than 100 blocks

    text = tab_text(slack.home_view(ANA))
    assert "Reminder 29" in text and "Reminder 30" not in text
    assert "and 10 more in the composer" in text


def test_cancel_from_the_tab_cancels_and_publishes_the_tab_again(rt, db, slack, clicks):
    mid = mine(db, text="Deploy at noon")
    publish_home(rt, ANA)
    view = slack.home_view(ANA)

    answer = press(clicks, view, ANA, button(view, "home_cancel", mid))

    assert answer.status_code == 200
    cancelled = message(db, mid)
    assert (cancelled["status"], cancelled["deleted"], cancelled["updated_by"]) == (
        "cancelled",
        True,
        ANA,
    )
    text = tab_text(slack.home_view(ANA))
    assert "Cancelled: it will not be sent." in text and "Deploy at noon" not in text


def test_cancel_of_another_persons_message_is_refused_and_changes_nothing(rt, db, slack, clicks):
    mid = mine(db, text="Deploy at noon")
    publish_home(rt, ANA)
    before = message(db, mid)

    answer = press(
        clicks, slack.home_view(ANA), BEN, button(slack.home_view(ANA), "home_cancel", mid)
    )

    assert answer.status_code == 200
    assert message(db, mid) == before
    assert "you can act only on messages you created" in tab_text(slack.home_view(BEN))


def test_an_admin_may_cancel_anyones_message(rt, db, slack, clicks, monkeypatch):
    monkeypatch.setenv("SLACK_ADMINS", f"U0ADMIN99,{BEN}")
    mid = mine(db, text="Deploy at noon")
    publish_home(rt, ANA)

    press(clicks, slack.home_view(ANA), BEN, button(slack.home_view(ANA), "home_cancel", mid))

    assert (message(db, mid)["status"], message(db, mid)["updated_by"]) == ("cancelled", BEN)
    assert "Cancelled" in tab_text(slack.home_view(BEN))


def test_send_now_from_the_tab_posts_it_once(rt, db, slack, clicks):
    mid = mine(db, text="Deploy at noon")
    publish_home(rt, ANA)
    pressed = button(slack.home_view(ANA), "home_send_now", send_value(mid, LATER))

    press(clicks, slack.home_view(ANA), ANA, pressed)
    again = press(clicks, slack.home_view(ANA), ANA, pressed)

    assert again.status_code == 200
    assert [p.delivery_id for p in slack.posts()] == [message_delivery_id(mid, LATER)]
    assert "Nothing changed" in tab_text(slack.home_view(ANA))  # the second press
    assert message(db, mid)["status"] == "sent"


def test_send_now_from_a_tab_older_than_the_send_sends_nothing_more(rt, db, slack, clicks):
    series = mine(db, **SERIES, status="recurring", send_at=None, next_run_at=T0)
    publish_home(rt, ANA)
    stale = slack.home_view(ANA)  # shows the occurrence due at T0
    run_pass(rt)  # which the pass then sends

    press(clicks, stale, ANA, button(stale, "home_send_now", send_value(series, T0)))

    assert [p.delivery_id for p in slack.posts()] == [message_delivery_id(series, T0)]
    assert "Nothing changed: the next occurrence is" in tab_text(slack.home_view(ANA))


def test_a_toggle_opts_out_and_the_gates_then_hold_back_the_category(rt, db, slack, clicks):
    seed_category(db, "nudges")
    publish_home(rt, ANA)

    press(clicks, slack.home_view(ANA), ANA, button(slack.home_view(ANA), "home_opt_out", "nudges"))
    nudge = to_person(db, "nudges", user=ANA)
    run_pass(rt)

    assert slack.posts() == []
    assert ledger(db)[message_delivery_id(nudge, T0)]["reason"] == "opted_out"
    assert "*Nudges*: you are opted out | Opt back in" in tab_text(slack.home_view(ANA))


def test_a_forged_press_is_refused_and_changes_nothing(rt, db, slack, clicks):
    mid = mine(db, text="Deploy at noon")
    publish_home(rt, ANA)
    view = slack.home_view(ANA)
    before = message(db, mid)

    answer = press(clicks, view, ANA, button(view, "home_cancel", mid), secret="not-" + SECRET)

    assert answer.status_code == 401 and answer.get_json()["error"] == "unauthorized"
    assert message(db, mid) == before and slack.home_view(ANA) == view


def test_opening_the_home_tab_publishes_it_and_the_messages_tab_nothing(db, slack, clicks):
    mine(db, text="Deploy at noon")

    messages_tab = event(clicks, app_home_opened(ANA, "1.1", tab="messages"), at=T0, event_id="Ev1")
    assert messages_tab.status_code == 200 and slack.home_view(ANA) is None

    home_tab = event(clicks, app_home_opened(ANA, "1.2"), at=T0, event_id="Ev2")
    assert home_tab.status_code == 200 and "Deploy at noon" in tab_text(slack.home_view(ANA))


def test_the_tab_says_who_last_changed_a_message_when_it_was_someone_else(rt, db, slack):
    mine(db, text="Edited on the page", updated_by="lead@example.com")
    mine(db, text="Cancelled by an admin", updated_by=BEN)
    mine(db, text="Mine alone", updated_by=ANA)

    publish_home(rt, ANA)

    text = tab_text(slack.home_view(ANA))
    assert "Last changed by lead@example.com" in text
    assert f"Last changed by <@{BEN}>" in text
    assert text.count("Last changed by") == 2  # not on the one only Ana changed
