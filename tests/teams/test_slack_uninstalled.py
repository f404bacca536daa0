"""The Slack app uninstalled holds Slack's posts only: in the same pass a Teams message is
posted as usual while a Slack one ends `failed` with `app_uninstalled`."""

from __future__ import annotations

from typing import Any

from emulator.slack_standin import Fault, SlackStandIn
from emulator.teams_standin import TeamsStandIn
from interactions.dispatch import take_inbound
from interactions.inbound import classify
from targets.kinds import run_pass
from tests.fixtures.events_api import UNINSTALL, event_body
from tests.fixtures.messages import message, seed_message
from tests.fixtures.teams_inbound import CHANNEL


def test_teams_sends_go_on_while_the_slack_app_is_uninstalled(
    teams_rt: Any, standin: TeamsStandIn, slack: SlackStandIn
) -> None:
    to_teams = seed_message(teams_rt.db, channel=None, teams_conversation=CHANNEL)
    to_slack = seed_message(teams_rt.db)
    slack.inject(Fault(kind="error", method="auth.test", code="token_revoked"))
    take_inbound(teams_rt, classify(event_body(UNINSTALL)))

    run_pass(teams_rt)

    assert len(standin.activities(CHANNEL)) == 1
    assert message(teams_rt.db, to_teams)["status"] == "sent"
    assert message(teams_rt.db, to_slack)["last_error"]["code"] == "app_uninstalled"
    assert slack.posts() == []
