"""A message addressed to Teams where this deployment has no Teams bot (no TEAMS_APP_ID):
it ends `failed` with `teams_not_configured`, alerted like any failure, and nothing is
posted anywhere; Slack messages in the same pass are untouched."""

from __future__ import annotations

from google.cloud.firestore_v1.base_query import FieldFilter

from core.runtime import Runtime
from core.store import DELIVERIES, MESSAGES
from emulator.slack_standin import SlackStandIn
from targets.kinds import run_pass
from tests.fixtures.messages import seed_message

CONVERSATION = "19:general@thread.tacv2"


def test_a_teams_message_without_a_teams_bot_fails_with_its_code(
    rt: Runtime, slack: SlackStandIn
) -> None:
    teams_id = seed_message(rt.db, channel=None, teams_conversation=CONVERSATION)
    slack_id = seed_message(rt.db)

    run_pass(rt)

    teams = rt.db.collection(MESSAGES).document(teams_id).get().to_dict() or {}
    assert teams["status"] == "failed"
    assert teams["last_error"]["code"] == "teams_not_configured"
    [entry] = [
        e.to_dict() or {}
        for e in rt.db.collection(DELIVERIES)
        .where(filter=FieldFilter("message_id", "==", teams_id))
        .stream()
    ]
    assert (entry["status"], entry["platform"], entry["channel"]) == (
        "failed",
        "teams",
        CONVERSATION,
    )
    assert rt.db.collection(MESSAGES).document(slack_id).get().get("status") == "sent"
    assert [p.channel for p in slack.posts()] == ["C0123ABCD"]  # the alert channel is unset


def test_a_document_naming_teams_and_slack_is_refused(rt: Runtime, slack: SlackStandIn) -> None:
    doc_id = seed_message(rt.db, teams_conversation=CONVERSATION)  # channel C0123ABCD too

    run_pass(rt)

    stored = rt.db.collection(MESSAGES).document(doc_id).get().to_dict() or {}
    assert (stored["status"], stored["last_error"]["code"]) == ("failed", "teams_and_slack")
    assert slack.posts() == []
