"""The `/schedule` modal's recurrence choices build the rules the composer's picker builds
(web/recurrence.js), and a 422's fields land under the inputs they are about."""

from __future__ import annotations

from typing import Any

import pytest

from interactions.schedule_form import draft_of, errors_of

ALL_BLOCKS = {"message", "recurrence", "date", "time", "days", "timezone", "category"}


def _values(
    recurrence: str, day: str, at: str = "09:30", days: tuple[str, ...] = ()
) -> dict[str, Any]:
    return {
        "message": {"message": {"type": "plain_text_input", "value": "Hi"}},
        "recurrence": {
            "recurrence": {"type": "static_select", "selected_option": {"value": recurrence}}
        },
        "date": {"date": {"type": "datepicker", "selected_date": day}},
        "time": {"time": {"type": "timepicker", "selected_time": at}},
        "days": {"days": {"type": "checkboxes", "selected_options": [{"value": d} for d in days]}},
        "timezone": {"timezone": {"type": "plain_text_input", "value": "Europe/Berlin"}},
    }


@pytest.mark.parametrize(
    ("recurrence", "day", "days", "rrule"),
    [
        ("daily", "2027-01-04", (), "FREQ=DAILY;BYHOUR=9;BYMINUTE=30"),
        ("weekdays", "2027-01-04", (), "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=30"),
        ("weekly", "2027-01-04", ("FR", "MO"), "FREQ=WEEKLY;BYDAY=MO,FR;BYHOUR=9;BYMINUTE=30"),
        ("weekly", "2027-01-04", (), "FREQ=WEEKLY;BYHOUR=9;BYMINUTE=30"),
        ("monthly_day", "2027-01-14", (), "FREQ=MONTHLY;BYMONTHDAY=14;BYHOUR=9;BYMINUTE=30"),
        ("monthly_weekday", "2027-01-12", (), "FREQ=MONTHLY;BYDAY=2TU;BYHOUR=9;BYMINUTE=30"),
        ("monthly_weekday", "2027-01-29", (), "FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=9;BYMINUTE=30"),
        ("yearly", "2027-03-01", (), "FREQ=YEARLY;BYMONTH=3;BYMONTHDAY=1;BYHOUR=9;BYMINUTE=30"),
    ],
)
def test_each_recurrence_is_the_composers_rule(recurrence, day, days, rrule) -> None:
    draft = draft_of(_values(recurrence, day, days=days), "C0GENERAL")

    assert draft == {
        "channel": "C0GENERAL",
        "text": "Hi",
        "timezone": "Europe/Berlin",
        "rrule": rrule,
        "dtstart": f"{day}T09:30",
    }


def test_once_is_the_local_time_in_the_zone_with_its_offset() -> None:
    summer = draft_of(_values("once", "2027-07-01", "18:00"), "D0DIRECT1")

    assert summer["send_at"] == "2027-07-01T18:00:00+02:00"
    assert "rrule" not in summer and "dtstart" not in summer


def test_problems_land_under_their_inputs_and_others_under_the_message() -> None:
    details = [
        {"field": "send_at", "message": "2027-01-03T10:00:00+01:00 is in the past"},
        {"field": "timezone", "message": "'Mars/Base' is not a time zone"},
        {"field": "category", "message": "'x' is not a category"},
        {"field": "channel", "message": "'Q1' is not a channel"},
        {"field": "text", "message": "must not be empty"},
    ]

    errors = errors_of(details, ALL_BLOCKS - {"category"})

    assert errors == {
        "date": "2027-01-03T10:00:00+01:00 is in the past",
        "timezone": "'Mars/Base' is not a time zone",
        "message": (
            "category: 'x' is not a category; channel: 'Q1' is not a channel; must not be empty"
        ),
    }
