"""The mute button on Teams: a message to a person's personal chat of an opt-out-able
category carries the reserved `mute_category` as an Action.Execute; that person's invoke
opts them out (the next occurrence `skipped` `opted_out`), the card says so with an Undo;
anyone else's changes nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from core.models import message_delivery_id
from core.store import PREFERENCES
from emulator.teams_standin import TeamsStandIn
from targets.kinds import run_pass
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import seed_series
from tests.fixtures.people import seed_category
from tests.fixtures.teams_inbound import PERSON, personal_chat, send

BEN = "29:1ben"


def _buttons(activity: dict[str, Any]) -> dict[str, dict[str, Any]]:
    actions = activity["attachments"][0]["content"].get("actions") or []
    return {button["verb"]: button for button in actions}


def _click(teams: Any, standin: TeamsStandIn, activity: Any, verb: str, user: str) -> str:
    value = _buttons(activity.activity)[verb]["data"]
    answer = send(teams, standin, standin.invoke_action(activity.id, verb, value, user, name="x"))
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return str(answer.get_json()["value"])


def _opted_out(rt: Any) -> list[str] | None:
    snap = rt.db.collection(PREFERENCES).document(PERSON).get()
    return snap.get("opted_out") if snap.exists else None


def test_mute_and_undo_on_a_teams_personal_chat(
    teams_rt: Any, teams: Any, standin: TeamsStandIn, clock: Any
) -> None:
    chat = personal_chat(standin)
    seed_category(teams_rt.db, "nudges")
    mid = seed_series(
        teams_rt.db, channel=None, teams_conversation=chat, user=PERSON, category="nudges"
    )
    run_pass(teams_rt)
    [posted] = standin.activities(chat)
    assert _buttons(posted.activity)["mute_category"]["title"] == "Mute Nudges"

    refused = _click(teams, standin, posted, "mute_category", BEN)
    assert refused == "This button is for the person this message was sent to."
    assert _opted_out(teams_rt) is None

    assert _click(teams, standin, posted, "mute_category", PERSON) == (
        "Your answer is in: Mute Nudges"
    )
    assert _opted_out(teams_rt) == ["nudges"]
    run_pass(teams_rt)
    [muted] = standin.updates()
    assert "You won't get Nudges messages." in str(muted.activity["attachments"][0]["content"])
    assert _buttons(muted.activity)["unmute_category"]["title"] == "Undo"

    clock.set(T0 + timedelta(days=1))
    run_pass(teams_rt)
    entry = ledger(teams_rt.db)[message_delivery_id(mid, T0 + timedelta(days=1))]
    assert (entry["status"], entry["reason"]) == ("skipped", "opted_out")

    assert _click(teams, standin, muted, "unmute_category", PERSON) == "Your answer is in: Undo"
    assert _opted_out(teams_rt) == []
