"""Teams' fault matrix through the pass: each row of core/teams_outcomes.py the Teams stand-in
can produce, met by a message's post to a channel, and what the passes then do with it:
failed with Teams' code and never posted; released and sent once later; or held under its
lease and reconciled through Graph (found: never posted again; absent: released and sent
once). Never two activities for one delivery id, never one lost."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import pytest

from core.models import message_delivery_id, rotation_delivery_id
from core.store import DELIVERIES, MESSAGES, TEAMS_CONVERSATIONS
from emulator.teams_faults import Fault
from emulator.teams_graph import CHANNEL_PERMISSION
from emulator.teams_standin import TeamsStandIn
from targets.kinds import run_pass
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message
from tests.fixtures.rotations import seed_rotation
from tests.fixtures.teams_inbound import AAD_GROUP, CHANNEL, TEAM, free_port, install

FAILED, RELEASED, HELD = "failed", "released", "held"


@dataclass(frozen=True)
class Row:
    fault: Fault | None  # None: the connection is refused (no fault can say so)
    first: str  # what the first pass leaves: failed, released, or held for reconciliation
    code: str  # our code for it (Teams' error.code where it gave one)
    recorded: bool = False  # whether Teams recorded the activity before the fault


def _error(status: int, code: str) -> Fault:
    return Fault("error", status=status, code=code, times=1)


ROWS = {
    "400-BadArgument": Row(_error(400, "BadArgument"), FAILED, "BadArgument"),
    "403-roster": Row(
        _error(403, "BotNotInConversationRoster"), FAILED, "BotNotInConversationRoster"
    ),
    "403-blocked": Row(
        _error(403, "ConversationBlockedByUser"), FAILED, "ConversationBlockedByUser"
    ),
    "404-ConversationNotFound": Row(
        _error(404, "ConversationNotFound"), FAILED, "ConversationNotFound"
    ),
    "412-PreconditionFailed": Row(
        _error(412, "PreconditionFailed"), RELEASED, "PreconditionFailed"
    ),
    "429-retry-after": Row(Fault("rate_limit", retry_after=90, times=1), RELEASED, "ratelimited"),
    "connection-refused": Row(None, RELEASED, "connection_refused"),
    "500-before": Row(Fault("server_error", status=500, times=1), HELD, "InternalServerError"),
    "502-before": Row(Fault("server_error", status=502, times=1), HELD, "BadGateway"),
    "503-before": Row(Fault("server_error", status=503, times=1), HELD, "ServiceUnavailable"),
    "504-before": Row(Fault("server_error", status=504, times=1), HELD, "GatewayTimeout"),
    "502-after": Row(
        Fault("server_error", status=502, after_record=True, times=1), HELD, "BadGateway", True
    ),
    "504-after": Row(
        Fault("server_error", status=504, after_record=True, times=1),
        HELD,
        "GatewayTimeout",
        True,
    ),
    "timeout-before": Row(Fault("timeout", delay=1.5, times=1), HELD, "timeout"),
    "timeout-after": Row(
        Fault("timeout", delay=1.5, after_record=True, times=1), HELD, "timeout", True
    ),
    "dropped-before": Row(Fault("drop", times=1), HELD, "connection_error"),
    "dropped-after": Row(Fault("drop", after_record=True, times=1), HELD, "connection_error", True),
}


def _entry(rt: Any, delivery_id: str) -> dict[str, Any]:
    return rt.db.collection(DELIVERIES).document(delivery_id).get().to_dict() or {}


def _ours(standin: TeamsStandIn, delivery_id: str) -> list[Any]:
    return [
        a
        for a in standin.activities(CHANNEL)
        if a.from_app_id == standin.app_id and a.delivery_id == delivery_id
    ]


def _refuse_connections(rt: Any) -> Any:
    """The stored conversation's service_url pointed at a port nobody listens on; the
    returned function puts it back."""
    ref = rt.db.collection(TEAMS_CONVERSATIONS).document(CHANNEL)
    real = (ref.get().to_dict() or {})["service_url"]
    ref.update({"service_url": f"http://127.0.0.1:{free_port()}/teams/"})
    return lambda: ref.update({"service_url": real})


@pytest.mark.parametrize("row", ROWS.values(), ids=ROWS.keys())
def test_each_teams_outcome_is_failed_released_or_reconciled_never_doubled(
    teams_rt: Any, standin: TeamsStandIn, row: Row
) -> None:
    standin.grant(CHANNEL, CHANNEL_PERMISSION)
    mid = seed_message(teams_rt.db, channel=None, teams_conversation=CHANNEL, text="Deploy")
    delivery_id = message_delivery_id(mid, T0)
    restore = _refuse_connections(teams_rt) if row.fault is None else None
    if row.fault is not None:
        standin.inject(row.fault)

    run_pass(teams_rt)

    entry = _entry(teams_rt, delivery_id)
    assert len(_ours(standin, delivery_id)) == (1 if row.recorded else 0)
    first = {"claimed": HELD}.get(entry["status"], entry["status"])
    assert (first, entry["error"]["code"]) == (row.first, row.code)
    if restore is not None:
        restore()
    for _ in range(20):  # past the lease, a reconciliation, a release's backoff
        teams_rt.clock.advance(timedelta(minutes=1))
        run_pass(teams_rt)

    stored = teams_rt.db.collection(MESSAGES).document(mid).get().to_dict() or {}
    entry = _entry(teams_rt, delivery_id)
    posted = _ours(standin, delivery_id)
    read_graph = standin.calls("graph", CHANNEL) > 0
    if row.first == FAILED:
        assert posted == []
        assert (entry["status"], stored["status"]) == ("failed", "failed")
        assert stored["last_error"]["code"] == row.code
        assert not read_graph
        return
    [activity] = posted  # sent once, whether before the fault or after it
    assert (entry["status"], entry["activity_id"]) == ("sent", activity.id)
    assert stored["status"] == "sent"
    # Only an answer that may follow a post is reconciled through Graph; a resend follows
    # only a post Graph showed absent, or one never made.
    assert read_graph == (row.first == HELD)
    assert entry["attempts"] == (1 if row.recorded else 2)


# --- every kind through hours of passes, as tests/processor/test_fault_matrix.py on Slack ----

ONE_OFF, SERIES, ROTATION = (
    "19:c01oneoff@thread.tacv2",
    "19:c02series@thread.tacv2",
    "19:c03rotate@thread.tacv2",
)
SERIES_COUNT = 6
SCENARIOS = {
    "dropped-after-record": [Fault("drop", after_record=True, times=4)],
    "timeouts-after-record": [Fault("timeout", delay=1.5, after_record=True, times=4)],
    "429-storm": [Fault("rate_limit", retry_after=20, times=40)],
    "5xx": [Fault("server_error", status=503, times=4)],
    "5xx-and-graph-briefly-down": [
        Fault("server_error", status=502, times=3),
        Fault("server_error", status=503, operation="graph", times=3),
    ],
    "dropped-and-graph-unreadable": [Fault("drop", after_record=True, times=3)],
}


def _install(teams: Any, standin: TeamsStandIn, readable: bool) -> None:
    for conversation in (ONE_OFF, SERIES, ROTATION):
        name = conversation[3:12]
        standin.channel(conversation, name=name, team_id=TEAM, aad_group_id=AAD_GROUP)
        assert set(install(teams, standin, conversation)) == {200}
    standin.grant(ONE_OFF, CHANNEL_PERMISSION, granted=readable)  # RSC is the team's


def _expected() -> list[str]:
    series = [
        message_delivery_id("series", T0 + timedelta(minutes=10 * n)) for n in range(SERIES_COUNT)
    ]
    day = rotation_delivery_id("standup", date(2027, 1, 4))
    return [message_delivery_id("one-off", T0), *series, day]


@pytest.mark.slow
@pytest.mark.parametrize("faults", SCENARIOS.values(), ids=SCENARIOS.keys())
def test_every_kind_is_posted_once_or_settled_with_a_reason_on_teams(
    teams_rt: Any, teams: Any, standin: TeamsStandIn, faults: list[Fault]
) -> None:
    _install(teams, standin, readable=faults != SCENARIOS["dropped-and-graph-unreadable"])
    db = teams_rt.db
    seed_message(db, "one-off", channel=None, teams_conversation=ONE_OFF)
    seed_message(
        db,
        "series",
        channel=None,
        teams_conversation=SERIES,
        status="recurring",
        send_at=None,
        rrule=f"FREQ=MINUTELY;INTERVAL=10;COUNT={SERIES_COUNT}",
        dtstart="2027-01-04T09:00",
    )
    members = ["29:1alice", "29:1bob", "29:1carol"]
    seed_rotation(db, channel=None, teams_conversation=ROTATION, members=members)
    for fault in faults:
        standin.inject(fault)

    for _ in range(150):  # two and a half hours of minutely passes
        run_pass(teams_rt)
        teams_rt.clock.advance(timedelta(minutes=1))

    posted = Counter(standin.delivery_ids())
    entries = ledger(db)
    assert {d: n for d, n in posted.items() if n > 1} == {}
    for delivery_id in _expected():
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
    assert set(posted) <= set(_expected())
    if faults == SCENARIOS["dropped-and-graph-unreadable"]:  # held for a person, not resent
        assert "unconfirmed" in {e["status"] for e in entries.values()}
    else:  # Graph could be read: every occurrence went out, once
        assert [posted[d] for d in _expected()] == [1] * len(_expected())
