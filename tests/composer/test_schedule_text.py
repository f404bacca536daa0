"""Schedules and failures in words through the `api` target (issue 32, points 2 and 7): every
message and rotation answer, and both previews, carry `schedule_text`; a failed message's
`last_error` carries the error catalog's `help`."""

from __future__ import annotations

from typing import Any

from core.store import DIRECTORY_CHANNELS
from emulator.slack_standin import Fault
from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from tests.fixtures.api import call
from tests.fixtures.messages import ONE_OFF, SERIES
from tests.fixtures.rotations import ROTATION
from tests.fixtures.rotations import create as create_rotation

SERIES_WORDS = "Every Monday and Wednesday at 9:30 (Europe/Berlin)"
WEEKDAYS_WORDS = "Every weekday at 9:30 (Europe/Berlin)"


def create(api: Any, body: dict[str, Any]) -> dict[str, Any]:
    status, answer = call(api, "POST", "/messages", body)
    assert status == 201, answer
    assert isinstance(answer, dict)
    return answer


def test_every_message_answer_says_its_schedule_in_words(api):
    created = create(api, SERIES)
    mid = created["id"]

    assert created["schedule_text"] == SERIES_WORDS
    assert call(api, "GET", f"/messages/{mid}")[1]["schedule_text"] == SERIES_WORDS
    [listed] = call(api, "GET", "/messages")[1]["messages"]
    assert listed["schedule_text"] == SERIES_WORDS
    status, paused = call(api, "POST", f"/messages/{mid}/pause")
    assert (status, paused["schedule_text"]) == (200, SERIES_WORDS)
    edited = {**SERIES, "rrule": "FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=17;BYMINUTE=0"}
    status, answer = call(api, "PUT", f"/messages/{mid}", edited)
    assert (status, answer["schedule_text"]) == (
        200,
        "Monthly on the last Friday at 17:00 (Europe/Berlin)",
    )


def test_a_one_off_says_when_in_its_own_zone(api):
    created = create(api, {**ONE_OFF, "timezone": "America/New_York"})

    # 12:00 UTC on 4 January is 7:00 in New York (EST), on the 12-hour clock there.
    assert created["schedule_text"] == "Once on Mon 4 Jan 2027 at 7:00 AM (America/New_York)"


def test_the_preview_says_the_drafts_schedule_in_words(api):
    status, preview = call(api, "POST", "/preview", SERIES)

    assert (status, preview["schedule_text"]) == (200, SERIES_WORDS)


def test_every_rotation_answer_and_its_preview_say_its_turns_in_words(api):
    created = create_rotation(api, ROTATION)
    rid = created["id"]

    assert created["schedule_text"] == WEEKDAYS_WORDS
    assert call(api, "GET", f"/rotations/{rid}")[1]["schedule_text"] == WEEKDAYS_WORDS
    [listed] = call(api, "GET", "/rotations")[1]["rotations"]
    assert listed["schedule_text"] == WEEKDAYS_WORDS
    status, preview = call(api, "POST", f"/rotations/{rid}/preview")
    assert (status, preview["schedule_text"]) == (200, WEEKDAYS_WORDS)


def test_a_failed_message_says_what_went_wrong_and_what_to_do(api, rt, slack, clock):
    created = create(api, {**ONE_OFF, "send_at": clock.now().isoformat()})
    slack.inject(Fault(kind="error", code="not_in_channel", channel="C0123ABCD"))

    assert run_kind(rt, MESSAGE_KIND)["failed"] == 1

    status, failed = call(api, "GET", f"/messages/{created['id']}")
    assert (status, failed["status"], failed["last_error"]["code"]) == (
        200,
        "failed",
        "not_in_channel",
    )
    assert failed["last_error"]["help"] == {
        "title": "The app is not in C0123ABCD",
        "action": "Invite the app: /invite @Scheduler in C0123ABCD, then Retry.",
    }


def test_a_schedule_typed_as_words_is_a_rule_problem_not_only_a_missing_start(api):
    body = {"channel": "C0123ABCD", "text": "Stand-up", "rrule": "every weekday at 9:30"}

    for path in ("/messages", "/preview"):
        status, answer = call(api, "POST", path, body)

        assert status == 422, answer
        problems = {detail["field"]: detail["message"] for detail in answer["details"]}
        assert set(problems) == {"dtstart", "rrule"}
        assert "needs dtstart" in problems["dtstart"]
        # The rule's detail says what a rule looks like.
        assert "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=30" in problems["rrule"]


def test_a_failed_messages_help_names_the_channel_the_directory_knows(api, rt, db, slack, clock):
    db.collection(DIRECTORY_CHANNELS).document("C0123ABCD").set({"name": "general"})
    created = create(api, {**ONE_OFF, "send_at": clock.now().isoformat()})
    slack.inject(Fault(kind="error", code="not_in_channel", channel="C0123ABCD"))
    run_kind(rt, MESSAGE_KIND)

    for answer in (
        call(api, "GET", f"/messages/{created['id']}")[1],
        call(api, "GET", "/messages?status=failed")[1]["messages"][0],
    ):
        assert answer["last_error"]["help"] == {
            "title": "The app is not in #general",
            "action": "Invite the app: /invite @Scheduler in #general, then Retry.",
        }
