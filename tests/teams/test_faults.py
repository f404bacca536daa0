"""Teams' fault matrix through the pass: each row of core/teams_outcomes.py the Teams stand-in
can produce, met by a message's post to a channel, and what the passes then do with it:
failed with Teams' code and never posted; released and sent once later; or held under its
lease and reconciled through Graph (found: never posted again; absent: released and sent
once). Never two activities for one delivery id, never one lost."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest

from core.models import message_delivery_id
from core.store import DELIVERIES, MESSAGES, TEAMS_CONVERSATIONS
from emulator.teams_faults import Fault
from emulator.teams_graph import CHANNEL_PERMISSION
from emulator.teams_standin import TeamsStandIn
from targets.kinds import run_pass
from tests.fixtures.clock import T0
from tests.fixtures.messages import seed_message
from tests.fixtures.teams_inbound import CHANNEL, free_port

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
