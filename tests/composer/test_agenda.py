"""`GET /agenda`: what is due when, messages and rotation turns alike, in one order, from
the code the send runs (exdates, DST, skips and away periods), with its range validated and
its search on text, channel and person."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

import pytest

from core.directory_refresh import refresh_step, slack_reader
from core.documents.directory import DirectoryList
from tests.fixtures.api import call, fields_of
from tests.fixtures.messages import ONE_OFF, SERIES, seed_series
from tests.fixtures.rotations import ROTATION
from tests.fixtures.rotations import create as create_rotation

A, B, C = ROTATION["members"]


def agenda(api: Any, **query: str) -> dict[str, Any]:
    status, answer = call(api, "GET", f"/agenda?{urlencode(query)}")
    assert status == 200, answer
    assert isinstance(answer, dict)
    return answer


def create_message(api: Any, body: dict[str, Any]) -> dict[str, Any]:
    status, answer = call(api, "POST", "/messages", body)
    assert status == 201, answer
    return dict(answer)


def shown(answer: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [(item["kind"], item["at"], item.get("member")) for item in answer["items"]]


def test_messages_and_rotation_turns_come_in_one_order(api):
    one_off = create_message(api, ONE_OFF)  # Monday 12:00 UTC
    series = create_message(api, SERIES)  # Mondays and Wednesdays 09:30 Berlin
    rotation = create_rotation(api, ROTATION)  # weekdays 09:30 Berlin, A then B then C

    answer = agenda(api, **{"from": "2027-01-04T10:00:00Z", "to": "2027-01-07T00:00:00Z"})

    # Monday's turn (08:30 UTC) is before the range; Tuesday's is B's, Wednesday's C's.
    assert shown(answer) == [
        ("message", "2027-01-04T12:00:00+00:00", None),
        ("rotation", "2027-01-05T08:30:00+00:00", B),
        ("message", "2027-01-06T08:30:00+00:00", None),
        ("rotation", "2027-01-06T08:30:00+00:00", C),
    ]
    first, turn, occurrence, _ = answer["items"]
    assert (first["id"], first["channel"], first["text"]) == (
        one_off["id"],
        "C0123ABCD",
        "Deploy at noon",
    )
    assert (occurrence["id"], occurrence["timezone"]) == (series["id"], "Europe/Berlin")
    assert occurrence["local"] == "2027-01-06T09:30:00+01:00"
    assert turn["id"] == rotation["id"]
    assert turn["text"] == f"<@{B}> is on call today"
    assert turn["local"] == "2027-01-05T09:30:00+01:00"
    assert answer["note"] is None


def test_the_default_range_is_the_next_seven_days(api):
    create_message(api, {**SERIES, "rrule": "FREQ=DAILY;BYHOUR=9;BYMINUTE=30"})

    answer = agenda(api)

    # T0 is Monday 10:00 Berlin: Tuesday to Monday next, seven occurrences.
    assert [item["at"][:10] for item in answer["items"]] == [
        f"2027-01-{day:02}" for day in range(5, 12)
    ]


def test_occurrences_across_a_dst_change_keep_their_wall_time(api, db):
    seed_series(
        db,
        next_run_at=datetime(2027, 1, 4, 14, 30, tzinfo=UTC),
        rrule="FREQ=DAILY;BYHOUR=9;BYMINUTE=30",
        dtstart="2027-01-01T09:30",
        timezone="America/New_York",
    )

    answer = agenda(api, **{"from": "2027-03-13T00:00:00Z", "to": "2027-03-16T00:00:00Z"})

    # New York springs forward on Sunday 14 March 2027: 09:30 is 14:30 UTC, then 13:30.
    assert [(item["at"], item["local"]) for item in answer["items"]] == [
        ("2027-03-13T14:30:00+00:00", "2027-03-13T09:30:00-05:00"),
        ("2027-03-14T13:30:00+00:00", "2027-03-14T09:30:00-04:00"),
        ("2027-03-15T13:30:00+00:00", "2027-03-15T09:30:00-04:00"),
    ]


def test_exdates_skips_and_away_periods_are_honoured(api):
    create_message(api, {**SERIES, "exdates": ["2027-01-06T09:30"]})
    create_rotation(
        api,
        {
            **ROTATION,
            "skips": {"2027-01-05": [B]},
            "away": [{"member": C, "from": "2027-01-06", "to": "2027-01-07"}],
        },
    )

    answer = agenda(api, **{"from": "2027-01-05T00:00:00Z", "to": "2027-01-09T00:00:00Z"})

    # Wednesday's stand-up is an exdate: no message. Monday A took the turn (before the
    # range); Tuesday B is out (C takes it, B next), Wednesday B, Thursday C is away (A),
    # Friday C is back.
    assert shown(answer) == [
        ("rotation", "2027-01-05T08:30:00+00:00", C),
        ("rotation", "2027-01-06T08:30:00+00:00", B),
        ("rotation", "2027-01-07T08:30:00+00:00", A),
        ("rotation", "2027-01-08T08:30:00+00:00", C),
    ]


def test_paused_and_cancelled_messages_and_paused_rotations_are_left_out(api):
    paused = create_message(api, ONE_OFF)
    cancelled = create_message(api, SERIES)
    kept = create_message(api, {**ONE_OFF, "text": "Still on"})
    create_rotation(api, {**ROTATION, "status": "paused"})
    assert call(api, "POST", f"/messages/{paused['id']}/pause")[0] == 200
    assert call(api, "DELETE", f"/messages/{cancelled['id']}")[0] == 200

    answer = agenda(api)

    assert [item["id"] for item in answer["items"]] == [kept["id"]]


def test_q_filters_on_text_channel_and_person(api):
    deploy = create_message(api, ONE_OFF)
    dm = create_message(api, {**ONE_OFF, "channel": None, "user": "U0DEMOANA", "text": "1:1"})
    rotation = create_rotation(api, {**ROTATION, "channel": "C0ROTATE0"})

    def ids(q: str) -> set[str]:
        return {item["id"] for item in agenda(api, q=q)["items"]}

    assert ids("DEPLOY") == {deploy["id"]}
    assert ids("c0rotate0") == {rotation["id"]}
    assert ids("u0demoana") == {dm["id"]}
    assert ids(C.lower()) == {rotation["id"]}  # the member whose turn it is
    assert ids("nobody here") == set()


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"from": "2027-01-04T00:00:00Z", "to": "2027-02-05T00:00:00Z"}, "to"),
        ({"from": "2027-01-04T00:00:00Z", "to": "2027-01-03T00:00:00Z"}, "to"),
        ({"from": "next monday"}, "from"),
        ({"from": "2027-01-04T00:00:00"}, "from"),
        ({"to": "2027-13-01T00:00:00Z"}, "to"),
        ({"q": "x" * 201}, "q"),
        ({"since": "2027-01-04T00:00:00Z"}, "since"),
    ],
)
def test_a_bad_range_is_422_naming_the_field(api, query, field):
    status, answer = call(api, "GET", f"/agenda?{urlencode(query)}")

    assert status == 422, answer
    assert fields_of(answer) == [field]


def test_an_unencoded_plus_in_an_offset_is_read_as_a_plus(api):
    create_message(api, ONE_OFF)

    status, answer = call(api, "GET", "/agenda?from=2027-01-04T13:00:00+01:00")

    assert status == 200, answer
    assert [item["at"] for item in answer["items"]] == ["2027-01-04T12:00:00+00:00"]


def test_a_message_with_more_occurrences_than_the_cap_is_cut_with_a_note(api):
    hourly = create_message(api, {**SERIES, "rrule": "FREQ=HOURLY;BYMINUTE=0"})

    answer = agenda(api)

    assert len(answer["items"]) == 100
    assert hourly["id"] in answer["note"]


def test_items_carry_names_and_q_finds_channels_and_people_by_name(api, db, settings, clock, slack):
    slack.seed_workspace()
    for which in (DirectoryList.CHANNELS, DirectoryList.USERS):
        refresh_step(db, slack_reader(settings, 200), clock, settings, "worker-a", which)
    standup = create_message(
        api, {**ONE_OFF, "channel": "C0ENGSTAND1", "text": "Ask <@U0BENCARTER> first"}
    )
    rotation = create_rotation(
        api, {**ROTATION, "channel": "C0LEADS0001", "members": ["U0ANAGARCIA", "U0CHLOEWONG"]}
    )

    answer = agenda(api, **{"from": "2027-01-04T10:00:00Z", "to": "2027-01-06T00:00:00Z"})

    message, turn = answer["items"]
    assert message["names"] == {"C0ENGSTAND1": "#eng-standup", "U0BENCARTER": "@Ben Carter"}
    assert turn["names"] == {"C0LEADS0001": "#team-leads", "U0CHLOEWONG": "@Chloe Wong"}
    assert message["schedule_text"] == "Once on Mon 4 Jan 2027 at 12:00 (UTC)"
    assert turn["schedule_text"] == "Every weekday at 9:30 (Europe/Berlin)"

    def found(q: str) -> list[tuple[str, str | None]]:
        return [(item["id"], item.get("member")) for item in agenda(api, q=q)["items"]]

    assert found("#eng-standup") == [(standup["id"], None)]
    assert found("ben carter") == [(standup["id"], None)]  # a person the text mentions
    # Chloe's turns only (Tue, Thu, Mon next week), not Ana's: the turn's member counts.
    assert found("chloe") == [(rotation["id"], "U0CHLOEWONG")] * 3
