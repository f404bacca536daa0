"""The operator CLI's list says what failed in words: each entry carries the error catalog's
title and action for its code, the channel named as the directory knows it."""

from __future__ import annotations

import json

import pytest

from core.models import message_delivery_id
from core.store import DIRECTORY_CHANNELS
from emulator.slack_standin import Fault
from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from targets.operator import main
from tests.fixtures.clock import T0
from tests.fixtures.messages import seed_message

pytestmark = pytest.mark.usefixtures("cli_on_the_test_clock")


def test_list_says_what_went_wrong_and_what_to_do(rt, db, slack, capsys):
    db.collection(DIRECTORY_CHANNELS).document("C0123ABCD").set({"name": "general"})
    mid = seed_message(db)
    slack.inject(Fault(kind="error", code="not_in_channel"))
    run_kind(rt, MESSAGE_KIND)
    capsys.readouterr()

    assert main(["list", "--status", "failed"]) == 0

    [row] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert row["delivery_id"] == message_delivery_id(mid, T0)
    assert row["help"] == {
        "title": "The app is not in #general",
        "action": "Invite the app: /invite @Scheduler in #general, then Retry.",
    }
