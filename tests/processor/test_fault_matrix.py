"""Slack faults against every kind of send: a one-off, a recurring series and a rotation,
side by side, through hours of minutely passes. Whatever the fault, each occurrence is
posted exactly once, or ends failed/unconfirmed with a reason a person can act on: zero
duplicates, zero lost."""

from __future__ import annotations

from collections import Counter
from datetime import date, timedelta
from typing import Any

import pytest

from core.models import message_delivery_id, rotation_delivery_id
from emulator.slack_standin import Fault
from targets.kinds import run_pass
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message
from tests.fixtures.rotations import seed_rotation
from tests.fixtures.slack import HISTORY

ONE_OFF, SERIES, ROTATION = "C01ONEOFF", "C02SERIES", "C03ROTATE"
SERIES_COUNT = 6

SCENARIOS = {
    "dropped-after-receipt": [Fault(kind="drop_after_receipt", times=4)],
    "timeouts": [Fault(kind="slow", delay=1.5, times=4)],
    "429-storm": [Fault(kind="rate_limit", retry_after=20, times=40)],
    "5xx": [Fault(kind="server_error", status=503, times=4)],
    "5xx-and-history-briefly-down": [
        Fault(kind="server_error", status=502, times=3),
        Fault(kind="server_error", status=503, method=HISTORY, times=3),
    ],
    "dropped-and-history-unreadable": [
        Fault(kind="drop_after_receipt", times=3),
        Fault(kind="error", code="missing_scope", method=HISTORY),
    ],
}


def expected_deliveries() -> list[str]:
    series = [
        message_delivery_id("series", T0 + timedelta(minutes=10 * n)) for n in range(SERIES_COUNT)
    ]
    return [
        message_delivery_id("one-off", T0),
        *series,
        rotation_delivery_id("standup", date(2027, 1, 4)),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("faults", SCENARIOS.values(), ids=SCENARIOS.keys())
def test_every_occurrence_is_posted_once_or_settled_with_a_reason(rt, db, slack, faults):
    seed_message(db, "one-off", channel=ONE_OFF)
    seed_message(
        db,
        "series",
        channel=SERIES,
        status="recurring",
        send_at=None,
        rrule=f"FREQ=MINUTELY;INTERVAL=10;COUNT={SERIES_COUNT}",
        dtstart="2027-01-04T09:00",
    )
    seed_rotation(db, channel=ROTATION)
    for fault in faults:
        slack.inject(fault)

    for _ in range(150):  # two and a half hours of minutely passes
        run_pass(rt)
        rt.clock.advance(timedelta(minutes=1))

    posted = Counter(slack.delivery_ids())
    entries = ledger(db)
    duplicates = {d: n for d, n in posted.items() if n > 1}
    assert duplicates == {}
    for delivery_id in expected_deliveries():
        if delivery_id not in entries:
            # A later occurrence of a series parked for a person: the series says why.
            series = message(db, "series")
            assert delivery_id.startswith("m:series:"), delivery_id
            assert series["status"] == "unconfirmed" and series["last_error"]["code"]
            continue
        entry: dict[str, Any] = entries[delivery_id]
        if entry["status"] == "sent":
            assert posted[delivery_id] == 1, delivery_id
        else:  # unverified or given up: only with a reason a person can act on
            assert entry["status"] in ("failed", "unconfirmed"), (delivery_id, entry)
            assert entry["error"]["code"], (delivery_id, entry)
    # Nothing was posted that is not one of these occurrences.
    assert set(posted) <= set(expected_deliveries())
