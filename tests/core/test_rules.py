"""Every stored or submitted rule is safe to evaluate (issue 16, points 1 and 9, and the rule
items of 11): the API answers 422 naming the field, a stored document that cannot be
evaluated ends `failed` with a code while the pass goes on, the dry run answers 200, and an
empty schedule never posts. Work is bounded by counts, never timed: `dateutil_periods`
counts the periods dateutil examines and stops a test that goes far past the budget (on code
without one, a rule that never matches spins to the year 9999)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from dateutil.rrule import _iterinfo

from core.anchor import MAX_WALK
from core.errors import DocumentError
from core.schedule import Recurrence, upcoming
from targets.kinds import run_pass
from tests.fixtures.api import call, fields_of
from tests.fixtures.clock import T0
from tests.fixtures.messages import SERIES, message, seed_message, seed_series, stored_ids
from tests.fixtures.tick import answer, at, bearer, tick

# The processor's budget is 100,000 periods and instants per evaluation (core.rules), and a
# walk in pieces takes at most MAX_WALK occurrences (core.anchor); a test stops once dateutil
# has examined this many periods in it, past a few evaluations and one such walk.
WORK_LIMIT = 3 * MAX_WALK


class Unbounded(BaseException):
    """Not an Exception: no `except Exception` in the pass may swallow it."""


@pytest.fixture
def dateutil_periods(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many periods (years, months, weeks, days of candidates) dateutil has built."""
    counted = {"periods": 0}

    def counting(original: Callable[..., Any]) -> Callable[..., Any]:
        def period(self: Any, *args: Any) -> Any:
            counted["periods"] += 1
            if counted["periods"] > WORK_LIMIT:
                raise Unbounded(f"dateutil examined more than {WORK_LIMIT} periods")
            return original(self, *args)

        return period

    for name in ("ydayset", "mdayset", "wdayset", "ddayset"):
        monkeypatch.setattr(_iterinfo, name, counting(getattr(_iterinfo, name)))
    return counted


# Rules that loop forever, raise outside DocumentError, are read as something else, or
# never match (searched up to the year 9999 before).
BAD_RULES = [
    "FREQ=DAILY;INTERVAL=0",
    "FREQ=DAILY;INTERVAL=-1",
    "FREQ=YEARLY;BYDAY=+60MO",
    "FREQ=YEARLY;BYMONTH=12;BYDAY=+53MO",
    "FREQ=DAILY;UNTIL=20271301T000000Z",
    "FREQ=SECONDLY;BYEASTER=400",
    "FREQ=MONTHLY;BYMONTHDAY=0",
    "FREQ=DAILY;BYMONTH=13",
    "FREQ=DAILY;COUNT=0",
    "FREQ=HOURLY;BYSECOND=60",
    "FREQ=WEEKLY;BYDAY=1MO",
    "FREQ=DAILY;COUNT=30;UNTIL=20280101T000000Z",
    "FREQ=DAILY;INTERVAL=²",
    "FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30",
    "FREQ=HOURLY;BYYEARDAY=366;BYMONTH=2",
    "FREQ=SECONDLY;BYWEEKNO=53;BYMONTH=6",
    "FREQ=YEARLY;BYWEEKNO=53;BYMONTH=6",
    "FREQ=DAILY;INTERVAL=7;BYDAY=MO",  # from a Friday: every 7th day is never a Monday
    "FREQ=MONTHLY;BYDAY=1FR,FR",  # every Friday by RFC 5545, the first one by dateutil
]
# A dtstart (or UNTIL) whose instant lies outside what a datetime holds in its zone.
OUT_OF_RANGE = [
    ({"dtstart": "0001-01-01T00:00", "timezone": "Etc/GMT-14"}, "dtstart"),
    ({"dtstart": "9999-12-31T23:00", "timezone": "Etc/GMT+12"}, "dtstart"),
    ({"rrule": "FREQ=DAILY;UNTIL=99991231T235959Z", "timezone": "Pacific/Kiritimati"}, "rrule"),
    ({"rrule": "FREQ=DAILY;UNTIL=00010101T000000Z", "timezone": "Etc/GMT+12"}, "rrule"),
]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("rule", BAD_RULES)
def test_a_bad_rule_is_422_naming_rrule_and_nothing_is_stored(api, db, dateutil_periods, rule):
    status, body = call(api, "POST", "/messages", {**SERIES, "rrule": rule})

    assert status == 422, body
    assert fields_of(body) == ["rrule"]
    assert stored_ids(db) == []
    assert dateutil_periods["periods"] <= 100_001  # one evaluation's budget at most


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("change", "field"), OUT_OF_RANGE)
def test_instants_out_of_range_in_their_zone_are_422(api, db, change, field):
    status, body = call(api, "POST", "/messages", {**SERIES, **change})

    assert status == 422, body
    assert fields_of(body) == [field]
    assert stored_ids(db) == []


@pytest.mark.timeout(120)
@pytest.mark.parametrize("rule", ["FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30", "FREQ=DAILY;COUNT=0"])
def test_a_bad_rule_is_422_in_a_preview_too(api, dateutil_periods, rule):
    status, body = call(api, "POST", "/preview", {**SERIES, "rrule": rule})

    assert status == 422, body
    assert fields_of(body) == ["rrule"]


def test_exdates_are_capped_at_1000_naming_the_field(api, db):
    day = datetime(2027, 2, 1, 9, 30)
    many = [(day + timedelta(days=i)).strftime("%Y-%m-%dT%H:%M") for i in range(100_000)]

    status, body = call(api, "POST", "/messages", {**SERIES, "exdates": many})
    assert status == 422, body
    assert fields_of(body) == ["exdates"]
    assert stored_ids(db) == []

    status, body = call(api, "POST", "/messages", {**SERIES, "exdates": many[:1000]})
    assert status == 201, body


def test_a_stored_series_with_too_many_exdates_fails(rt, db, slack):
    day = datetime(2027, 2, 1, 9, 30)
    many = [(day + timedelta(days=i)).strftime("%Y-%m-%dT%H:%M") for i in range(1001)]
    doc = seed_series(db, exdates=many)

    run_pass(rt)

    assert failure(db, doc) == ("failed", "invalid_exdates")
    assert slack.posts() == []


# --- stored documents: the pass ------------------------------------------------------------


def failure(db: Any, doc: str) -> tuple[str, str | None]:
    data = message(db, doc)
    return data["status"], (data.get("last_error") or {}).get("code")


STORED_BAD = [
    *({"rrule": rule} for rule in BAD_RULES),
    # Secondly since 2020 with a COUNT and no stored anchor: counting to T0 from dtstart
    # needs years of occurrences (without COUNT, an anchor in phase needs no walk).
    {"rrule": "FREQ=SECONDLY;COUNT=999999999", "dtstart": "2020-01-01T00:00"},
    *(change for change, _ in OUT_OF_RANGE),
]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_stored_bad_rules_fail_with_a_code_and_the_pass_goes_on(
    rt, db, slack, dateutil_periods, capsys
):
    bad = [seed_series(db, channel="C0BAD0001", **change) for change in STORED_BAD]
    good = seed_message(db, channel="C0GOOD001", text="still sent")

    run_pass(rt)

    for doc, change in zip(bad, STORED_BAD, strict=True):
        status, code = failure(db, doc)
        assert status == "failed", change
        assert code in ("invalid_rrule", "invalid_dtstart"), change
    assert message(db, good)["status"] == "sent"
    assert [(p.channel, p.text) for p in slack.posts()] == [("C0GOOD001", "still sent")]
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    escalated = {line["message_id"] for line in lines if line["message"] == "delivery failed"}
    assert escalated == set(bad)  # one ERROR line each
    # One evaluation's budget each, and for the COUNT series without an anchor one walk of
    # at most MAX_WALK occurrences (in pieces), a period each.
    assert dateutil_periods["periods"] <= len(bad) * 100_001 + MAX_WALK


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_dry_run_previews_bad_rules_as_errors_and_answers_200(
    tick_app, env, db, slack, dateutil_periods
):
    client = tick_app.test_client()
    bad = [seed_series(db, **change) for change in STORED_BAD]

    body = answer(tick(client, headers=bearer(), body={"dry_run": True, **at(T0)}), 200)

    errors = {p["id"]: p.get("error", {}).get("code") for p in body["previews"]}
    assert set(errors) == set(bad)
    assert set(errors.values()) <= {"invalid_rrule", "invalid_dtstart"}
    assert slack.posts() == []


# --- point 9: an empty schedule never sends ------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        {"rrule": "FREQ=DAILY;COUNT=0"},
        {"rrule": "FREQ=DAILY;BYMONTH=13"},
        {"rrule": "FREQ=DAILY;UNTIL=20261231T000000Z"},  # ends before dtstart
        {"rrule": "FREQ=DAILY;COUNT=1", "exdates": ["2027-01-01T09:00"]},
        {"rrule": "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;UNTIL=20271231T000000Z"},
    ],
)
def test_a_stored_series_without_occurrences_fails_and_never_posts(rt, db, slack, change):
    doc = seed_series(db, **change)

    run_pass(rt)
    run_pass(rt)

    assert failure(db, doc) == ("failed", "invalid_rrule")
    assert slack.posts() == []


# --- the budget itself -----------------------------------------------------------------------


def test_a_rule_that_never_matches_stops_at_the_budget(dateutil_periods):
    # Every 7th day from a Tuesday is a Tuesday: nothing static says so, evaluating does.
    with pytest.raises(DocumentError, match="more than 100000 steps") as raised:
        Recurrence.parse("FREQ=DAILY;INTERVAL=7;BYDAY=MO", "2027-01-05T09:00", "UTC")

    assert raised.value.code == "invalid_rrule"
    assert 90_000 < dateutil_periods["periods"] <= 100_001


@pytest.mark.timeout(120)
def test_dateutils_time_of_day_search_is_bounded_too():
    # A secondly rule limited to 23:00 in February, from March: dateutil steps through each
    # second of each day until February, without building a period for most of them.
    with pytest.raises(DocumentError, match="time-of-day search") as raised:
        Recurrence.parse("FREQ=SECONDLY;BYHOUR=23;BYMONTH=2", "2027-03-01T00:00", "UTC")

    assert raised.value.code == "invalid_rrule"


def test_a_series_reaching_the_end_of_time_ends_cleanly():
    rule = Recurrence.parse("FREQ=DAILY", "9999-12-29T12:00", "Etc/GMT+12")
    after = datetime(9999, 12, 1, tzinfo=UTC)

    # 9999-12-31T12:00 at UTC-12 would be 10000-01-01 in UTC: the series ends before it.
    assert list(rule.occurrences_after(after)) == [
        datetime(9999, 12, 30, 0, tzinfo=UTC),
        datetime(9999, 12, 31, 0, tzinfo=UTC),
    ]
    draft = {"rrule": "FREQ=DAILY", "dtstart": "9999-12-29T12:00", "timezone": "Etc/GMT+12"}
    assert len(upcoming(draft, after, 5)) == 2


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_resuming_a_series_past_the_budget_is_409_not_a_hang(api, db, dateutil_periods):
    # Paused, then resumed at T0: counting to the resume point is seven years of seconds
    # from dtstart.
    doc = seed_series(
        db, status="paused", rrule="FREQ=SECONDLY;COUNT=999999999", dtstart="2020-01-01T00:00"
    )

    status, body = call(api, "POST", f"/messages/{doc}/resume")

    assert status == 409, body
    assert "invalid_rrule" in body["message"]
    assert message(db, doc)["status"] == "paused"
    assert dateutil_periods["periods"] <= 2 * MAX_WALK  # a walk to count, in pieces
