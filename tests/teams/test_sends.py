"""Sends to Teams through the pass, end to end: the app installed through the `teams`
target, a message, a series, a rotation day and a person's message posted as one activity
each (an Adaptive Card carrying the delivery id), the ledger recording Teams' activity id,
and a removed conversation failing with `conversation_removed`."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta
from typing import Any

from core.models import event_delivery_id, event_id, message_delivery_id
from core.store import DELIVERIES, MESSAGES, ROTATIONS
from emulator.slack_standin import SlackStandIn
from emulator.teams_standin import TeamsStandIn
from targets.kinds import run_pass
from tests.fixtures.api import call
from tests.fixtures.clock import T0
from tests.fixtures.messages import seed_message
from tests.fixtures.people import seed_category
from tests.fixtures.rotations import seed_rotation
from tests.fixtures.teams_inbound import CHANNEL, PERSON, personal_chat, remove

TEXT = "Deploy **now**: the _release_ is tagged"


def _entry(rt: Any, delivery_id: str) -> dict[str, Any]:
    return rt.db.collection(DELIVERIES).document(delivery_id).get().to_dict() or {}


def test_a_message_is_posted_once_as_a_card_and_its_activity_id_recorded(
    teams_rt: Any, standin: TeamsStandIn, slack: SlackStandIn
) -> None:
    mid = seed_message(teams_rt.db, channel=None, teams_conversation=CHANNEL, text=TEXT)

    run_pass(teams_rt)
    run_pass(teams_rt)  # nothing more to send

    [posted] = standin.activities(CHANNEL)
    delivery_id = message_delivery_id(mid, T0)
    assert posted.delivery_id == delivery_id
    [attachment] = posted.activity["attachments"]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    assert "**now**" in str(attachment["content"])  # rendered once, as TextBlock markdown
    entry = _entry(teams_rt, delivery_id)
    assert (entry["status"], entry["platform"], entry["activity_id"]) == (
        "sent",
        "teams",
        posted.id,
    )
    stored = teams_rt.db.collection(MESSAGES).document(mid).get().to_dict() or {}
    assert stored["status"] == "sent" and "last_slack_ts" not in stored
    assert slack.posts() == []


def test_a_rotation_day_mentions_the_member_by_their_teams_id(
    teams_rt: Any, standin: TeamsStandIn
) -> None:
    members = ["29:1ana", "29:1ben"]
    seed_rotation(
        teams_rt.db,
        channel=None,
        teams_conversation=CHANNEL,
        members=members,
        timezone="UTC",
        weekdays=list(range(7)),
        send_time="08:30",
        next_run_at=T0,
    )

    run_pass(teams_rt)

    [posted] = standin.activities(CHANNEL)
    card = posted.activity["attachments"][0]["content"]
    [mention] = card["msteams"]["entities"]
    assert mention["type"] == "mention" and mention["mentioned"]["id"] == "29:1ana"
    assert mention["text"] in str(card["body"])
    stored = teams_rt.db.collection(ROTATIONS).document("standup").get().to_dict() or {}
    assert stored["cursor"] == 1


def test_a_message_to_a_person_goes_to_their_personal_chat(
    teams_rt: Any, standin: TeamsStandIn
) -> None:
    chat = personal_chat(standin)
    seed_message(teams_rt.db, channel=None, teams_conversation=chat, text="Your review is due")

    run_pass(teams_rt)

    [posted] = standin.activities(chat)
    assert posted.activity["conversation"]["id"] == chat
    assert standin.conversation(chat).user_id == PERSON


def test_a_removed_conversation_fails_its_messages_with_conversation_removed(
    teams_rt: Any, teams: Any, standin: TeamsStandIn
) -> None:
    assert set(remove(teams, standin, CHANNEL)) == {200}
    mid = seed_message(teams_rt.db, channel=None, teams_conversation=CHANNEL)

    run_pass(teams_rt)

    stored = teams_rt.db.collection(MESSAGES).document(mid).get().to_dict() or {}
    assert (stored["status"], stored["last_error"]["code"]) == ("failed", "conversation_removed")
    assert standin.activities(CHANNEL) == []


def test_posts_to_one_teams_conversation_are_two_seconds_apart(
    teams_rt: Any, standin: TeamsStandIn
) -> None:
    """Teams allows a bot 1,800 posts an hour in one conversation: a burst is paced at one
    every 2 s (a Slack channel's is 1 s), so the stand-in's limits never answer 429."""
    for n in range(4):
        seed_message(teams_rt.db, channel=None, teams_conversation=CHANNEL, text=f"note {n}")

    run_pass(teams_rt)

    created = sorted(datetime.fromisoformat(a.created) for a in standin.activities(CHANNEL))
    assert len(created) == 4
    assert [later - earlier for earlier, later in itertools.pairwise(created)] == [
        timedelta(seconds=2)
    ] * 3


def test_a_persons_gates_hold_back_a_teams_message_past_their_daily_cap(
    teams_rt: Any, standin: TeamsStandIn
) -> None:
    """A message to a person on Teams (their personal chat, with `user` their Teams id) passes
    their gates like a Slack DM: the second of the day in a capped category is skipped."""
    chat = personal_chat(standin)
    seed_category(teams_rt.db, "digest", daily_cap=1)
    first = seed_message(
        teams_rt.db, channel=None, teams_conversation=chat, user=PERSON, category="digest"
    )
    second = seed_message(
        teams_rt.db, channel=None, teams_conversation=chat, user=PERSON, category="digest"
    )

    run_pass(teams_rt)

    outcomes = {
        mid: (teams_rt.db.collection(MESSAGES).document(mid).get().to_dict() or {})["status"]
        for mid in (first, second)
    }
    assert sorted(outcomes.values()) == ["sent", "skipped"]
    skipped = next(mid for mid, status in outcomes.items() if status == "skipped")
    entry = _entry(teams_rt, message_delivery_id(skipped, T0))
    assert (entry["status"], entry["reason"]) == ("skipped", "daily_cap")
    assert len(standin.activities(chat)) == 1


def test_an_event_is_sent_to_teams_once_by_its_first_caller(
    teams_rt: Any, api: Any, standin: TeamsStandIn
) -> None:
    """`POST /events` naming a Teams conversation: the first caller's request posts the card
    (201), every later caller is told `duplicate` and nothing more is posted."""
    body = {"key": "deploy-42:done", "teams_conversation": CHANNEL, "text": "Deploy 42 is **out**"}

    first = call(api, "POST", "/events", body)
    again = call(api, "POST", "/events", body)

    assert first[0] == 201, first
    assert again[0] == 200 and again[1]["duplicate"] is True
    [posted] = standin.activities(CHANNEL)
    assert posted.delivery_id == event_delivery_id(event_id("deploy-42:done"))
    entry = _entry(teams_rt, posted.delivery_id)
    assert (entry["status"], entry["activity_id"]) == ("sent", posted.id)
