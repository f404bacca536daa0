"""The Teams stand-in's faults and per-conversation rate limits, seen through the Teams SDK's
ApiClient: what the transport's outcome table will have to classify."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from microsoft_teams.api.activities.message import MessageActivityInput

from core.clock import FixedClock
from emulator.teams_faults import Fault
from emulator.teams_standin import TeamsStandIn
from tests.fixtures.teams import CHANNEL, send, send_card, update

T0 = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)
OTHER = "19:other0001@thread.tacv2"


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def teams(clock: FixedClock) -> Iterator[TeamsStandIn]:
    with TeamsStandIn(clock=clock) as running:
        running.channel(CHANNEL)
        running.channel(OTHER, name="Other")
        yield running


def refused(teams: TeamsStandIn, conversation: str = CHANNEL) -> httpx.Response:
    with pytest.raises(httpx.HTTPStatusError) as raised:
        send_card(teams, "d-1", conversation)
    return raised.value.response


# -- before the activity is recorded ----------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "code"),
    [(412, "PreconditionFailed"), (400, "BadArgument"), (403, "BotNotInConversationRoster")],
)
def test_an_error_fault_answers_its_status_and_code_and_records_nothing(teams, status, code):
    teams.inject(Fault("error", status=status, code=code, times=1))

    response = refused(teams)

    assert (response.status_code, response.json()["error"]["code"]) == (status, code)
    assert teams.activities() == []
    assert send_card(teams, "d-1")  # one-shot: spent
    assert teams.delivery_ids() == ["d-1"]


def test_a_rate_limit_fault_is_429_with_retry_after(teams):
    teams.inject(Fault("rate_limit", retry_after=7, times=1))

    response = refused(teams)

    assert response.status_code == 429
    assert response.headers["Retry-After"] == "7"
    assert response.json()["error"]["code"] == "TooManyRequests"
    assert teams.activities() == []


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_a_server_error_before_the_record_posts_nothing(teams, status):
    teams.inject(Fault("server_error", status=status, times=1))

    assert refused(teams).status_code == status
    assert teams.activities() == []


def test_a_timeout_before_the_record_posts_nothing(teams):
    teams.inject(Fault("timeout", delay=2.0, times=1))

    with pytest.raises(httpx.TimeoutException):
        send(teams, MessageActivityInput().with_text("hi"), timeout=0.3)

    assert teams.activities() == []


def test_a_dropped_connection_before_the_record_posts_nothing(teams):
    teams.inject(Fault("drop", times=1))

    with pytest.raises(httpx.RemoteProtocolError):
        send_card(teams, "d-1")

    assert teams.activities() == []


# -- after the activity is recorded: the ambiguous answers ----------------------------------


@pytest.mark.parametrize("status", [502, 504])
def test_a_server_error_after_the_record_posted_it(teams, status):
    teams.inject(Fault("server_error", status=status, after_record=True, times=1))

    assert refused(teams).status_code == status
    assert teams.delivery_ids() == ["d-1"]


def test_a_timeout_after_the_record_posted_it(teams):
    teams.inject(Fault("timeout", delay=2.0, after_record=True, times=1))

    with pytest.raises(httpx.TimeoutException):
        send(teams, MessageActivityInput().with_text("hi"), timeout=0.3)

    assert [a.activity["text"] for a in teams.activities()] == ["hi"]


def test_a_dropped_connection_after_the_record_posted_it(teams):
    teams.inject(Fault("drop", after_record=True, times=1))

    with pytest.raises(httpx.RemoteProtocolError):
        send_card(teams, "d-1")

    assert teams.delivery_ids() == ["d-1"]


# -- matching ---------------------------------------------------------------------------------


def test_a_counted_fault_is_spent_after_its_times(teams):
    teams.inject(Fault("server_error", times=2))

    assert refused(teams).status_code == 502
    assert refused(teams).status_code == 502
    send_card(teams, "d-1")

    assert teams.delivery_ids() == ["d-1"]
    assert teams.calls("send") == 3


def test_a_fault_on_one_conversation_leaves_the_others_alone(teams):
    teams.inject(Fault("server_error", conversation=OTHER))

    send_card(teams, "d-1", CHANNEL)
    assert refused(teams, OTHER).status_code == 502

    assert teams.delivery_ids() == ["d-1"]


def test_an_update_fault_leaves_sends_alone(teams):
    activity_id = send_card(teams, "d-1")
    teams.inject(
        Fault("error", operation="update", status=404, code="ActivityNotFoundInConversation")
    )

    with pytest.raises(httpx.HTTPStatusError) as raised:
        update(teams, activity_id, MessageActivityInput().with_text("edited"))

    assert raised.value.response.status_code == 404
    assert teams.updates() == []
    send_card(teams, "d-2")


@pytest.mark.parametrize(
    "spec",
    [
        {"kind": "error"},  # no status or code
        {"kind": "error", "status": 412, "code": "PreconditionFailed", "after_record": True},
        {"kind": "timeout"},  # no delay
        {"kind": "server_error", "status": 404},
        {"kind": "drop", "retry_after": 3},
        {"kind": "drop", "operation": "graph", "after_record": True},
        {"kind": "drop", "operation": "chat.postMessage"},
        {"kind": "drop", "times": 0},
        {"kind": "boom"},
        {"kind": "drop", "channel": "C1"},
    ],
)
def test_a_fault_that_makes_no_sense_is_refused_up_front(spec):
    with pytest.raises(ValueError):
        Fault.from_json(spec)


# -- Teams' per conversation rate limits ----------------------------------------------------


def test_teams_limits_allow_7_in_a_second_and_8_in_two(teams, clock):
    for n in range(7):
        send(teams, MessageActivityInput().with_text(f"m{n}"))
    first = refused(teams)
    clock.advance(timedelta(seconds=1))
    send(teams, MessageActivityInput().with_text("m7"))  # the 1 s window is free again
    second = refused(teams)  # but 8 in the last 2 s is the limit

    assert (first.status_code, first.headers["Retry-After"]) == (429, "1")
    assert (second.status_code, second.headers["Retry-After"]) == (429, "1")
    assert len(teams.activities()) == 8
    assert teams.calls("send") == 10  # refused calls are counted as calls, not as posts


def test_rate_limits_are_per_conversation(teams):
    teams.set_rate_limit([(1, 60)])

    send_card(teams, "d-1", CHANNEL)
    send_card(teams, "d-2", OTHER)
    response = refused(teams, CHANNEL)

    assert response.headers["Retry-After"] == "60"
    assert teams.delivery_ids() == ["d-1", "d-2"]


def test_a_refused_call_does_not_use_up_the_window(teams, clock):
    teams.set_rate_limit([(1, 10)])
    send_card(teams, "d-1")
    clock.advance(timedelta(seconds=4))
    assert refused(teams).headers["Retry-After"] == "6"
    clock.advance(timedelta(seconds=6))

    send_card(teams, "d-2")

    assert teams.delivery_ids() == ["d-1", "d-2"]


def test_no_rate_limit_when_set_to_none(teams):
    teams.set_rate_limit(None)

    for n in range(12):
        send_card(teams, f"d-{n}")

    assert len(teams.delivery_ids()) == 12


def test_rate_limits_refuse_nonsense():
    with TeamsStandIn() as teams, pytest.raises(ValueError):
        teams.set_rate_limit([(0, 1)])


def test_the_tenant_allows_50_a_second_across_conversations(teams, clock):
    conversations = [teams.channel(f"19:c{n:03d}@thread.tacv2").id for n in range(8)]
    for n in range(50):
        send(teams, MessageActivityInput().with_text(f"m{n}"), conversations[n % 8])

    response = refused(teams, OTHER)  # a conversation with nothing sent yet
    clock.advance(timedelta(seconds=1))
    send_card(teams, "d-1", OTHER)

    assert (response.status_code, response.headers["Retry-After"]) == (429, "1")
    assert len(teams.activities()) == 51


def test_set_rate_limit_sets_the_tenant_windows_too(teams):
    teams.set_rate_limit(None, tenant=[(2, 60)])

    send_card(teams, "d-1", CHANNEL)
    send_card(teams, "d-2", OTHER)

    assert refused(teams, CHANNEL).headers["Retry-After"] == "60"
