"""Buttons on Teams, end to end: a card's Action.Execute click arrives at the `teams`
target as a signed `adaptiveCard/action` invoke, is answered with a message at once, and is
recorded in `responses` by the same first-answer-wins create() as a Slack click; the card
is updated in place (PUT .../activities/{id}) by the next pass, off the request path. A
forged or unknown value records nothing; a rotation's "Skip me today" hands the turn on."""

from __future__ import annotations

from typing import Any

from core.actions import button_value
from core.models import message_delivery_id, rotation_delivery_id
from core.store import RESPONSES, ROTATIONS
from emulator.teams_standin import TeamsStandIn
from targets.kinds import run_pass
from tests.fixtures.clock import T0
from tests.fixtures.messages import seed_message
from tests.fixtures.rotations import seed_rotation
from tests.fixtures.teams_inbound import CHANNEL, send

ACTIONS = [{"id": "yes", "label": "Yes", "style": "primary"}, {"id": "no", "label": "No"}]
ANA, BEN = "29:1ana", "29:1ben"


def _click(teams: Any, standin: TeamsStandIn, activity_id: str, verb: str, value: Any, user: str):
    invoke = standin.invoke_action(activity_id, verb, {"value": value}, user, name=user[3:])
    answer = send(teams, standin, invoke)
    assert answer.status_code == 200, answer.get_data(as_text=True)
    body = answer.get_json()
    assert (body["statusCode"], body["type"]) == (200, "application/vnd.microsoft.activity.message")
    return body["value"]


def _responses(rt: Any) -> list[dict[str, Any]]:
    return [s.to_dict() or {} for s in rt.db.collection(RESPONSES).stream()]


def _buttons(activity: dict[str, Any]) -> list[dict[str, Any]]:
    return list(activity["attachments"][0]["content"].get("actions") or [])


def test_a_click_is_recorded_once_and_the_card_updated_in_place(
    teams_rt: Any, teams: Any, standin: TeamsStandIn
) -> None:
    mid = seed_message(
        teams_rt.db, channel=None, teams_conversation=CHANNEL, actions=ACTIONS, one_answer=True
    )
    run_pass(teams_rt)
    [posted] = standin.activities(CHANNEL)
    delivery_id = message_delivery_id(mid, T0)
    yes = next(b for b in _buttons(posted.activity) if b["verb"] == "yes")
    assert (yes["type"], yes["data"]["value"]) == (
        "Action.Execute",
        button_value(delivery_id, "yes"),
    )

    assert _click(teams, standin, posted.id, "yes", yes["data"]["value"], ANA) == (
        "Your answer is in: Yes"
    )
    no = button_value(delivery_id, "no")
    assert _click(teams, standin, posted.id, "no", no, BEN) == "Someone already answered: Yes"
    [answer] = _responses(teams_rt)
    assert (answer["user"], answer["action_id"], answer["pending_update"]) == (ANA, "yes", True)
    assert standin.updates() == []  # the card changes off the click's request path

    run_pass(teams_rt)

    [updated] = standin.updates()
    assert updated.id == posted.id and updated.delivery_id == delivery_id
    assert _buttons(updated.activity) == []  # one_answer: closed
    card = updated.activity["attachments"][0]["content"]
    assert [e["mentioned"]["id"] for e in card["msteams"]["entities"]] == [ANA]
    assert "answered **Yes**" in str(card["body"])
    [answer] = _responses(teams_rt)
    assert "pending_update" not in answer  # shown


def test_a_forged_or_unknown_value_records_nothing(
    teams_rt: Any, teams: Any, standin: TeamsStandIn
) -> None:
    mid = seed_message(teams_rt.db, channel=None, teams_conversation=CHANNEL, actions=ACTIONS)
    run_pass(teams_rt)
    [posted] = standin.activities(CHANNEL)
    delivery_id = message_delivery_id(mid, T0)
    not_ours = "This button is not one of ours any more."

    forged = [
        ("maybe", button_value(delivery_id, "maybe")),  # not in the pinned catalog
        ("yes", button_value("m:someone-else:20270104T090000Z", "yes")),  # not a delivery
        ("yes", button_value(delivery_id, "no")),  # verb and value disagree
        ("yes", "not a button value"),
    ]
    for verb, value in forged:
        assert _click(teams, standin, posted.id, verb, value, ANA) == not_ours

    assert _responses(teams_rt) == []
    run_pass(teams_rt)
    assert standin.updates() == []


def test_skip_me_today_hands_a_teams_rotation_day_on(
    teams_rt: Any, teams: Any, standin: TeamsStandIn
) -> None:
    seed_rotation(
        teams_rt.db,
        channel=None,
        teams_conversation=CHANNEL,
        members=[ANA, BEN],
        timezone="UTC",
        weekdays=list(range(7)),
        send_time="09:00",
        next_run_at=T0,
        actions=[{"id": "skip_today", "label": "Skip me today"}],
    )
    run_pass(teams_rt)
    [posted] = standin.activities(CHANNEL)
    skip = button_value(rotation_delivery_id("standup", T0.date()), "skip_today")

    assert _click(teams, standin, posted.id, "skip_today", skip, BEN).startswith("Only")
    assert "Skip me today" in _click(teams, standin, posted.id, "skip_today", skip, ANA)
    run_pass(teams_rt)

    [updated] = standin.updates()
    card = updated.activity["attachments"][0]["content"]
    assert [e["mentioned"]["id"] for e in card["msteams"]["entities"]] == [BEN, ANA]
    stored = teams_rt.db.collection(ROTATIONS).document("standup").get().to_dict() or {}
    assert (stored["members"], stored["cursor"]) == ([BEN, ANA], 1)  # Ben took today; Ana next
