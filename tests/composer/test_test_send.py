"""`POST /messages/{id}/test`: the message as it would post, as a DM to the person named,
marked as a test; no ledger entry, no counted occurrence, the message untouched; Slack's
refusals answered with a clear status."""

from __future__ import annotations

from emulator.slack_standin import Fault
from emulator.slack_users import dm_id
from tests.fixtures.api import call
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message
from tests.fixtures.runtime import ADMIN_TOKEN

TESTER = "U0TESTER1"
BUTTONS = [{"id": "ack", "label": "Acknowledge"}, {"id": "later", "label": "Later"}]


def test_a_test_is_a_dm_marked_as_a_test_that_counts_for_nothing(api, db, slack):
    mid = seed_message(db, text="Deploy <@U0ANA1234> at *noon*", actions=BUTTONS)
    before = message(db, mid)

    status, answer = call(api, "POST", f"/messages/{mid}/test", {"user": TESTER})

    assert status == 200, answer
    assert answer["channel"] == dm_id(TESTER)
    (post,) = slack.posts()
    assert (post.channel, post.ts) == (answer["channel"], answer["ts"])
    mark = post.blocks[0]
    assert mark["type"] == "context"
    assert mark["elements"][0]["text"] == (
        "Test — not a scheduled send (buttons left out: Acknowledge · Later)"
    )
    assert "<@U0ANA1234>" in str(post.blocks[1:])  # the same render as a send
    assert not [block for block in post.blocks if block["type"] == "actions"]
    assert ledger(db) == {}
    assert message(db, mid) == before


def test_a_person_slack_will_not_dm_is_422_naming_user(api, db, slack):
    mid = seed_message(db)
    slack.set_user("U0GONE123", deactivated=True)

    bad = call(api, "POST", f"/messages/{mid}/test", {"user": "bob"})
    empty = call(api, "POST", f"/messages/{mid}/test", {"user": ""})
    gone = call(api, "POST", f"/messages/{mid}/test", {"user": "U0GONE123"})

    assert bad[0] == empty[0] == gone[0] == 422
    assert [d["field"] for d in bad[1]["details"]] == ["user"]
    assert [d["field"] for d in empty[1]["details"]] == ["user"]
    assert gone[1]["details"] == [{"field": "user", "message": "user_disabled"}]
    assert slack.posts() == []


def test_a_post_slack_refuses_is_502_naming_its_code_and_503_when_only_for_now(api, db, slack):
    mid = seed_message(db)
    slack.inject(Fault(kind="error", code="msg_blocks_too_long", times=1))
    slack.inject(Fault(kind="rate_limit", retry_after=30, times=1))

    refused = call(api, "POST", f"/messages/{mid}/test", {"user": TESTER})
    response = api.open(
        f"/messages/{mid}/test",
        method="POST",
        json={"user": TESTER},
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
    )

    assert refused[0] == 502
    assert refused[1]["error"] == "slack_refused"
    assert refused[1]["details"] == [{"field": "slack", "message": "msg_blocks_too_long"}]
    assert (response.status_code, response.headers["Retry-After"]) == (503, "30")
    assert ledger(db) == {}
    assert slack.posts() == []


def test_a_teams_message_is_not_tested_and_says_why(api, db, slack):
    mid = seed_message(db, channel=None, teams_conversation="19:standup@thread.v2")

    status, answer = call(api, "POST", f"/messages/{mid}/test", {"user": TESTER})

    assert status == 422
    assert [d["field"] for d in answer["details"]] == ["user"]
    assert "Microsoft Teams" in answer["message"]
    assert slack.posts() == []
