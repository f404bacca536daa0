"""`/schedule` and "Schedule a copy" as Slack sends them, signed, to the `interactions`
target: the modal opens in the person's zone, a submission creates the message through the
API's validation (created_by the Slack user) and the pass posts it at its time; a bad one
shows each problem under its input and stores nothing."""

from __future__ import annotations

import json
import urllib.parse
from datetime import timedelta
from typing import Any

import pytest

from emulator.slack_clicks import form_body
from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from tests.fixtures import slack_native as native
from tests.fixtures.clock import T0, utc
from tests.fixtures.interactions import send
from tests.fixtures.people import seed_category

ALICE, BOB = "U0ALICE00", "U0BOB0000"
CHANNEL = "C0GENERAL"
BERLIN = "Europe/Berlin"


@pytest.fixture(autouse=True)
def _connected(clicks: Any, slack: Any, db: Any) -> None:
    """The target's Firestore channel open before a test's requests: the first call of a
    process connects, which on a busy machine can take longer than the 2 s a request is
    answered in: a query as the modal's, and a `/schedule help` through the whole path."""
    list(db.collection("categories").limit(1).stream())
    send(clicks, _command(slack, BOB, "help"), T0)


def _command(slack: Any, user: str, text: str = "", trigger: str | None = None) -> bytes:
    fields = {
        "token": "legacy-verification-token",
        "team_id": "T0STANDIN",
        "team_domain": "standin",
        "channel_id": CHANNEL,
        "channel_name": "general",
        "user_id": user,
        "user_name": user.lower(),
        "command": "/schedule",
        "text": text,
        "api_app_id": "A0SCHEDULER",
        "response_url": slack.response_url(),
        "trigger_id": trigger or slack.issue_trigger_id(user),
    }
    return urllib.parse.urlencode(fields).encode()


def _values(
    text: str,
    day: str,
    at: str,
    *,
    recurrence: str = "once",
    zone: str = BERLIN,
    days: tuple[str, ...] = (),
    category: str | None = None,
) -> dict[str, Any]:
    rich = {
        "type": "rich_text",
        "elements": [{"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}]
        if text
        else [],
    }
    option = {"value": recurrence, "text": {"type": "plain_text", "text": recurrence}}
    chosen = [{"value": d, "text": {"type": "plain_text", "text": d}} for d in days]
    picked = (
        None
        if category is None
        else {"value": category, "text": {"type": "plain_text", "text": category}}
    )
    return {
        "message": {"message": {"type": "rich_text_input", "rich_text_value": rich}},
        "recurrence": {"recurrence": {"type": "static_select", "selected_option": option}},
        "date": {"date": {"type": "datepicker", "selected_date": day}},
        "time": {"time": {"type": "timepicker", "selected_time": at}},
        "days": {"days": {"type": "checkboxes", "selected_options": chosen}},
        "timezone": {"timezone": {"type": "plain_text_input", "value": zone}},
        "category": {"category": {"type": "static_select", "selected_option": picked}},
    }


def _submit(clicks: Any, slack: Any, user: str, values: dict[str, Any]) -> Any:
    view = slack.opened_view(user)  # as Slack shows it: with the id views.open gave it
    payload = {
        "type": "view_submission",
        "team": {"id": "T0STANDIN", "domain": "standin"},
        "user": {"id": user, "username": user.lower(), "team_id": "T0STANDIN"},
        "api_app_id": "A0SCHEDULER",
        "trigger_id": slack.issue_trigger_id(user),
        "view": {**view, "state": {"values": values}},
    }
    return send(clicks, form_body(payload), T0)


def _messages(db: Any) -> list[dict[str, Any]]:
    return [snap.to_dict() for snap in db.collection("scheduled_messages").stream()]


def _open(clicks: Any, slack: Any, user: str = ALICE) -> dict[str, Any]:
    answer = send(clicks, _command(slack, user), T0)
    assert answer.status_code == 200 and answer.data == b""
    view: dict[str, Any] = slack.views.opened()[-1]
    return view


def test_schedule_opens_the_modal_in_the_persons_zone_and_the_pass_posts_it(clicks, slack, db, rt):
    slack.views.set_timezone(ALICE, BERLIN)

    view = _open(clicks, slack)

    assert view["callback_id"] == "schedule_message"
    assert json.loads(view["private_metadata"]) == {"conversation": CHANNEL}
    inputs = {block["block_id"]: block["element"] for block in view["blocks"]}
    assert list(inputs) == ["message", "recurrence", "date", "time", "days", "timezone"]
    assert inputs["message"]["type"] == "rich_text_input"
    assert inputs["timezone"]["initial_value"] == BERLIN
    assert inputs["date"] == {  # 10:00 in Berlin: today's 09:00 has passed
        "type": "datepicker",
        "initial_date": "2027-01-05",
        "action_id": "date",
    }
    assert [o["value"] for o in inputs["recurrence"]["options"]] == [
        "once",
        "daily",
        "weekdays",
        "weekly",
        "monthly_day",
        "monthly_weekday",
        "yearly",
    ]

    answer = _submit(clicks, slack, ALICE, _values("Stand-up moved", "2027-01-05", "10:30"))

    assert answer.get_json() == {"response_action": "clear"}
    (message,) = _messages(db)
    assert message["created_by"] == ALICE
    assert (message["channel"], message["text"]) == (CHANNEL, "Stand-up moved")
    assert message["send_at"] == utc(2027, 1, 5, 9, 30)
    (told,) = slack.views.ephemerals()
    assert (told.channel, told.user) == (CHANNEL, ALICE)
    assert told.text == (
        f"Scheduled for <#{CHANNEL}>: Once on Tue 5 Jan 2027 at 10:30 (Europe/Berlin)."
    )

    rt.clock.set(utc(2027, 1, 5, 9, 30))
    run_kind(rt, MESSAGE_KIND)
    (post,) = slack.posts()
    assert (post.channel, post.text) == (CHANNEL, "Stand-up moved")


def test_a_weekly_series_on_ticked_days_says_when_its_first_one_goes_out(clicks, slack, db):
    seed_category(db, "standups")
    view = _open(clicks, slack)
    assert [b["block_id"] for b in view["blocks"]][-1] == "category"

    values = _values(
        "Stand-up",
        "2027-01-04",
        "09:30",
        recurrence="weekly",
        days=("MO", "WE"),
        category="standups",
    )
    answer = _submit(clicks, slack, ALICE, values)

    assert answer.get_json() == {"response_action": "clear"}
    (message,) = _messages(db)
    assert message["rrule"] == "FREQ=WEEKLY;BYDAY=MO,WE;BYHOUR=9;BYMINUTE=30"
    assert (message["dtstart"], message["timezone"]) == ("2027-01-04T09:30", BERLIN)
    assert message["category"] == "standups"
    assert message["next_run_at"] == utc(2027, 1, 6, 8, 30)  # Monday's 09:30 has passed
    (told,) = slack.views.ephemerals()
    assert told.text == (
        f"Scheduled for <#{CHANNEL}>: Every Monday and Wednesday at 9:30 (Europe/Berlin)."
        " The first one goes out on Wed 6 Jan 2027 at 9:30 (Europe/Berlin)."
    )


def test_an_invalid_submission_names_each_problem_under_its_input_and_stores_nothing(
    clicks, slack, db
):
    _open(clicks, slack)

    answer = _submit(clicks, slack, ALICE, _values("", "2027-01-03", "10:00", zone="Mars/Base"))

    body = answer.get_json()
    assert body["response_action"] == "errors"
    assert set(body["errors"]) == {"message", "date", "timezone"}
    assert "Mars/Base" in body["errors"]["timezone"]
    assert "in the past" in body["errors"]["date"]
    assert _messages(db) == []
    assert slack.views.ephemerals() == []


def test_an_expired_trigger_tells_the_person_to_try_again(clicks, slack, db, clock):
    trigger = slack.issue_trigger_id(ALICE)
    clock.advance(timedelta(seconds=4))

    answer = send(clicks, _command(slack, ALICE, trigger=trigger), clock.now())

    assert answer.status_code == 200
    assert slack.views.opened() == []
    (reply,) = slack.replies()
    assert reply["response_type"] == "ephemeral"
    assert "expired_trigger_id" in reply["text"] and "type the command again" in reply["text"]


def test_schedule_list_shows_only_the_persons_upcoming_messages(clicks, slack, db):
    for user, text, day in (
        (ALICE, "Retro", "2027-01-08"),
        (BOB, "Lunch", "2027-01-05"),
        (ALICE, "Demo", "2027-01-06"),
    ):
        _open(clicks, slack, user)
        _submit(clicks, slack, user, _values(text, day, "15:00", zone="UTC"))

    answer = send(clicks, _command(slack, ALICE, "list"), T0)

    body = answer.get_json()
    assert body["response_type"] == "ephemeral"
    assert body["text"].splitlines() == [
        "Your scheduled messages (2):",
        f"• <#{CHANNEL}> next on Wed 6 Jan 2027 at 15:00 (UTC): “Demo” (Once on Wed 6 Jan"
        " 2027 at 15:00 (UTC))",
        f"• <#{CHANNEL}> next on Fri 8 Jan 2027 at 15:00 (UTC): “Retro” (Once on Fri 8 Jan"
        " 2027 at 15:00 (UTC))",
    ]


def test_schedule_help_and_unknown_words_answer_the_usage(clicks, slack):
    for words in ("help", "tomorrow please"):
        body = send(clicks, _command(slack, ALICE, words), T0).get_json()
        assert body["response_type"] == "ephemeral"
        assert "*/schedule list*" in body["text"]
    assert slack.views.opened() == []


def test_schedule_a_copy_opens_the_modal_filled_with_that_message(clicks, slack, db):
    typed = {
        "type": "rich_text",
        "block_id": "x1",
        "elements": [
            {
                "type": "rich_text_section",
                "elements": [{"type": "text", "text": "Ship it", "style": {"bold": True}}],
            }
        ],
    }
    payload = {
        "type": "message_action",
        "callback_id": "schedule_copy",
        "trigger_id": slack.issue_trigger_id(BOB),
        "response_url": slack.response_url(),
        "team": {"id": "T0STANDIN", "domain": "standin"},
        "channel": {"id": "C0RELEASE", "name": "release"},
        "user": {"id": BOB, "name": "bob"},
        "message_ts": "1798966800.000100",
        "message": {
            "type": "message",
            "user": ALICE,
            "text": "*Ship it*",
            "ts": "1798966800.000100",
            "blocks": [typed],
        },
    }

    answer = send(clicks, form_body(payload), T0)

    assert answer.status_code == 200
    (view,) = slack.views.opened()
    assert json.loads(view["private_metadata"]) == {"conversation": "C0RELEASE"}
    (message_input,) = [b["element"] for b in view["blocks"] if b["block_id"] == "message"]
    assert message_input["initial_value"] == {"type": "rich_text", "elements": typed["elements"]}

    _submit(
        clicks,
        slack,
        BOB,
        {
            **_values("", "2027-01-05", "10:00"),
            "message": {
                "message": {
                    "type": "rich_text_input",
                    "rich_text_value": message_input["initial_value"],
                }
            },
        },
    )
    (message,) = _messages(db)
    assert (message["channel"], message["text"], message["created_by"]) == (
        "C0RELEASE",
        "**Ship it**",
        BOB,
    )


def test_a_person_who_only_types_the_message_schedules_it_for_9_in_their_zone(clicks, slack, db):
    for user, zone, due in (
        (ALICE, "Asia/Tokyo", utc(2027, 1, 5, 0)),  # 18:00 there
        (BOB, "America/New_York", utc(2027, 1, 4, 14)),
    ):  # 04:00 there
        slack.views.set_timezone(user, zone)
        native.command(clicks, "/schedule", "", user=user, channel=CHANNEL, at=T0, slack=slack)
        view = slack.opened_view(user)
        assert view is not None

        answer = native.submit(clicks, view, {"message": "Coffee?"}, user=user, at=T0, slack=slack)

        assert answer.get_json() == {"response_action": "clear"}
        (message,) = [m for m in _messages(db) if m["created_by"] == user]
        assert (message["send_at"], message["timezone"]) == (due, zone)


def test_a_view_submitted_twice_schedules_one_message(clicks, slack, db):
    # Slack may deliver a submission again, and a person submits again when the first
    # answer came after Slack's 3 s: the view's id makes it one message.
    _open(clicks, slack)
    values = _values("Stand-up moved", "2027-01-05", "10:30")

    first = _submit(clicks, slack, ALICE, values)
    again = _submit(clicks, slack, ALICE, values)

    assert first.get_json() == again.get_json() == {"response_action": "clear"}
    assert [m["text"] for m in _messages(db)] == ["Stand-up moved"]
    assert len(slack.views.ephemerals()) == 1
