"""Reconciliation of an ambiguous Teams post through Microsoft Graph, in a channel and in a
person's chat (read by its Graph id, `19:{Entra id}_{app id}@unq.gbl.spaces`): found (our
bot's card carrying the delivery id: never posted again), absent (released, sent once
later), unreadable without the RSC permission (`unconfirmed` under the hold policy, sent once
more under `on_ambiguous: retry`), Graph's 429 and 5xx asked again by a later pass, and a
card of another bot or a person's message quoting the delivery id taken as no proof."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from core.clock import FixedClock
from core.models import message_delivery_id
from core.store import DELIVERIES
from emulator.teams_faults import Fault
from emulator.teams_graph import CHANNEL_PERMISSION, CHAT_PERMISSION
from emulator.teams_standin import TeamsStandIn
from processor.reconcile import backoff
from targets.kinds import run_pass
from tests.fixtures.clock import T0
from tests.fixtures.messages import seed_message
from tests.fixtures.runtime import make_runtime
from tests.fixtures.teams_inbound import CHANNEL, personal_chat

LOST = Fault("drop", after_record=True, times=1)  # recorded, its answer never came
NEVER = Fault("server_error", status=503, times=1)  # a 503 before the record
OTHER_APP = "11111111-2222-4333-8444-555555555555"


def _where(standin: TeamsStandIn, place: str) -> tuple[str, str]:
    """The conversation, and the RSC permission Graph reads it by."""
    if place == "channel":
        return CHANNEL, CHANNEL_PERMISSION
    return personal_chat(standin), CHAT_PERMISSION


def _seed(rt: Any, conversation: str, **fields: Any) -> str:
    mid = seed_message(
        rt.db, channel=None, teams_conversation=conversation, text="Review due", **fields
    )
    return message_delivery_id(mid, T0)


def _entry(rt: Any, delivery_id: str) -> dict[str, Any]:
    return rt.db.collection(DELIVERIES).document(delivery_id).get().to_dict() or {}


def _ours(standin: TeamsStandIn, delivery_id: str) -> list[Any]:
    return [
        a
        for a in standin.activities()
        if a.from_app_id == standin.app_id and a.delivery_id == delivery_id
    ]


def _past_the_lease(rt: Any) -> None:
    rt.clock.advance(timedelta(seconds=301))
    run_pass(rt)


def _past_a_release(rt: Any) -> None:
    rt.clock.advance(backoff(2))
    run_pass(rt)


@pytest.mark.parametrize("place", ["channel", "personal"])
@pytest.mark.parametrize("case", ["found", "absent", "unreadable_hold", "unreadable_retry"])
def test_an_ambiguous_post_is_settled_by_what_graph_shows(
    teams_rt: Any, standin: TeamsStandIn, place: str, case: str
) -> None:
    conversation, permission = _where(standin, place)
    if not case.startswith("unreadable"):
        standin.grant(conversation, permission)
    fields = {"on_ambiguous": "retry"} if case == "unreadable_retry" else {}
    delivery_id = _seed(teams_rt, conversation, **fields)
    standin.inject(LOST if case in ("found", "unreadable_hold") else NEVER)

    run_pass(teams_rt)
    assert _entry(teams_rt, delivery_id)["status"] == "claimed"  # held, not resent
    _past_the_lease(teams_rt)
    _past_a_release(teams_rt)

    entry = _entry(teams_rt, delivery_id)
    posted = _ours(standin, delivery_id)
    assert standin.calls("graph", conversation) >= 1
    if case == "unreadable_hold":
        assert (entry["status"], entry["error"]["code"]) == ("unconfirmed", "Forbidden")
        teams_rt.clock.advance(timedelta(days=1))
        run_pass(teams_rt)
        assert len(_ours(standin, delivery_id)) == 1  # never resent
        return
    [activity] = posted
    assert activity.conversation_id == conversation
    assert (entry["status"], entry["activity_id"]) == ("sent", activity.id)
    assert entry["attempts"] == (1 if case == "found" else 2)


@pytest.mark.parametrize(
    ("fault", "passes_unsettled", "graph_reads"),
    [
        (Fault("rate_limit", operation="graph", retry_after=120, times=1), 2, 2),
        (Fault("server_error", operation="graph", status=503, times=2), 2, 3),
    ],
    ids=["graph-429", "graph-503-twice"],
)
def test_graph_refusing_for_now_is_asked_again_by_a_later_pass(
    teams_rt: Any, standin: TeamsStandIn, fault: Fault, passes_unsettled: int, graph_reads: int
) -> None:
    standin.grant(CHANNEL, CHANNEL_PERMISSION)
    delivery_id = _seed(teams_rt, CHANNEL)
    standin.inject(LOST)
    standin.inject(fault)
    run_pass(teams_rt)

    _past_the_lease(teams_rt)  # Graph refuses: still held under its lease, nothing resent
    assert _entry(teams_rt, delivery_id)["status"] == "claimed"
    assert standin.calls("graph", CHANNEL) == 1
    for _ in range(passes_unsettled - 1):
        teams_rt.clock.advance(timedelta(minutes=1))
        run_pass(teams_rt)
        entry = _entry(teams_rt, delivery_id)
        assert entry["status"] == "claimed", entry
    teams_rt.clock.advance(timedelta(minutes=2))
    run_pass(teams_rt)

    [activity] = _ours(standin, delivery_id)
    entry = _entry(teams_rt, delivery_id)
    assert (entry["status"], entry["activity_id"], entry["attempts"]) == ("sent", activity.id, 1)
    # A 429 is waited out (Retry-After 120 s: not asked at the next minute); a 503 is not.
    assert standin.calls("graph", CHANNEL) == graph_reads


@pytest.mark.parametrize("place", ["channel", "personal"])
def test_another_bots_card_or_a_person_quoting_the_delivery_id_is_no_proof(
    teams_rt: Any, standin: TeamsStandIn, place: str
) -> None:
    conversation, permission = _where(standin, place)
    standin.grant(conversation, permission)
    delivery_id = _seed(teams_rt, conversation)
    standin.inject(NEVER)
    run_pass(teams_rt)
    card = {
        "type": "AdaptiveCard",
        "version": "1.5",
        "body": [{"type": "Container", "id": delivery_id, "items": []}],
    }
    standin.add_message(conversation, card=card, app_id=OTHER_APP, app_name="Copycat")
    standin.add_message(conversation, f"did {delivery_id} go out?", card=card)

    _past_the_lease(teams_rt)
    assert _entry(teams_rt, delivery_id)["status"] == "released"  # absent: ours is not there
    _past_a_release(teams_rt)

    [activity] = _ours(standin, delivery_id)
    entry = _entry(teams_rt, delivery_id)
    assert (entry["status"], entry["activity_id"]) == ("sent", activity.id)
    assert len(standin.activities(conversation)) == 3  # the two quotes, and ours once


@pytest.mark.parametrize("place", ["channel", "personal"])
def test_a_busy_conversation_is_read_over_several_passes_resuming_where_it_stopped(
    teams_rt: Any, standin: TeamsStandIn, clock: FixedClock, place: str
) -> None:
    """One Graph page a pass (HISTORY_CALLS_PER_PASS=1), pages short or empty while more
    remain, 120 newer messages above ours: each pass reads on from the last one's page."""
    rt = make_runtime(
        replace(teams_rt.settings, history_calls_per_pass=1),
        teams_rt.db,
        clock,
        "worker-a",
    )
    conversation, permission = _where(standin, place)
    standin.grant(conversation, permission)
    standin.set_short_pages(True)
    delivery_id = _seed(rt, conversation)
    standin.inject(LOST)
    run_pass(rt)
    for n in range(120):
        clock.advance(timedelta(milliseconds=100))
        standin.add_message(conversation, f"chatter {n}")

    clock.advance(timedelta(seconds=301))
    passes = 0
    while _entry(rt, delivery_id)["status"] == "claimed" and passes < 12:
        run_pass(rt)
        clock.advance(timedelta(minutes=1))
        passes += 1

    [activity] = _ours(standin, delivery_id)
    entry = _entry(rt, delivery_id)
    assert (entry["status"], entry["activity_id"], entry["attempts"]) == ("sent", activity.id, 1)
    assert passes == standin.calls("graph", conversation) > 2  # one page a pass, none again
