"""An install and a removal of one conversation at the same time, through the `teams` target,
in every interleaving of their read and write (`orchestrate`): the later activity wins and
the document is never a mix of the two."""

from __future__ import annotations

import copy
import itertools
from datetime import timedelta
from typing import Any

from tests.fixtures.clock import T0
from tests.fixtures.teams_inbound import CHANNEL, post, stored
from tests.support.interleave import orchestrate


class Rounds:
    """orchestrate runs both requests once per interleaving; whichever starts a round first
    picks a fresh conversation id, and the other races for the same one."""

    def __init__(self) -> None:
        self.arrivals = itertools.count()
        self.conversations: list[str] = []

    def conversation_for_this_round(self) -> str:
        if next(self.arrivals) % 2 == 0:
            self.conversations.append(f"19:race-{len(self.conversations)}@thread.tacv2")
        return self.conversations[-1]


def for_conversation(activity: dict[str, Any], conversation: str) -> dict[str, Any]:
    moved = copy.deepcopy(activity)
    moved["conversation"]["id"] = conversation
    moved["channelData"]["channel"]["id"] = conversation
    return moved


def test_an_install_racing_a_later_removal_ends_removed(teams_app, teams, standin, db, clock):
    install = standin.install_activity(CHANNEL)[0]
    clock.advance(timedelta(minutes=1))
    removal = standin.remove_activity(CHANNEL)[0]
    token = standin.sign(install)
    rounds = Rounds()
    answers: list[int] = []

    def deliver(activity: dict[str, Any]) -> None:
        conversation = rounds.conversation_for_this_round()
        answer = post(teams_app.test_client(), for_conversation(activity, conversation), token)
        answers.append(answer.status_code)

    orchestrate(lambda: deliver(install), lambda: deliver(removal), name="teams_conversation")

    assert len(rounds.conversations) > 2  # orchestrate ran several interleavings
    assert set(answers) == {200}
    documents = stored(db)
    assert sorted(documents) == sorted(rounds.conversations)
    for document in documents.values():
        assert document["status"] == "removed"
        assert document["removed_at"] == clock.now()
        assert document["activity_at"] == T0 + timedelta(minutes=1)
