"""The outcome table's ambiguous codes, proven by what Slack (the stand-in) recorded.

Each code Slack may answer when its own side broke mid-request is injected once BEFORE the
post is recorded (Slack did not post) and once AFTER (Slack posted, then answered the error).
Passes then run, the clock moving past the lease so reconciliation settles the send. Whatever
the case, the channel ends with exactly one post of the occurrence and the message is sent
with that post's ts: reconciliation found it, or it was absent and resent once.

The cases are written out here, not derived from core.slack.OUTCOMES, so the table itself is
under test: reclassifying fatal_error as RETRY_LATER resends the AFTER case (two posts), and
as FAILED leaves the BEFORE case never posted.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from core.models import message_delivery_id
from emulator.slack_standin import Fault
from messages.kind import MESSAGE_KIND
from processor.kind_pass import run_kind
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.messages import message, seed_message

CHANNEL = "C0PROOF01"
MAX_PASSES = 40  # minutely passes: the 5-minute lease, reconciliation and one backoff fit

ERROR_CODES = ["fatal_error", "internal_error", "service_unavailable", "request_timeout"]
STATUSES = [500, 502, 503]


def error_fault(code: str, after_post: bool) -> Fault:
    return Fault(kind="error", code=code, channel=CHANNEL, times=1, after_post=after_post)


def status_fault(status: int, after_post: bool) -> Fault:
    return Fault(
        kind="server_error", status=status, channel=CHANNEL, times=1, after_post=after_post
    )


CASES = {
    "fatal_error-before": error_fault("fatal_error", after_post=False),
    "fatal_error-after": error_fault("fatal_error", after_post=True),
    "internal_error-before": error_fault("internal_error", after_post=False),
    "internal_error-after": error_fault("internal_error", after_post=True),
    "service_unavailable-before": error_fault("service_unavailable", after_post=False),
    "service_unavailable-after": error_fault("service_unavailable", after_post=True),
    "request_timeout-before": error_fault("request_timeout", after_post=False),
    "request_timeout-after": error_fault("request_timeout", after_post=True),
    "500-before": status_fault(500, after_post=False),
    "500-after": status_fault(500, after_post=True),
    "502-before": status_fault(502, after_post=False),
    "502-after": status_fault(502, after_post=True),
    "503-before": status_fault(503, after_post=False),
    "503-after": status_fault(503, after_post=True),
}


def run_until_settled(rt, db, mid: str) -> int:
    """Minutely passes until the message leaves pending/sending; how many it took."""
    for passes in range(1, MAX_PASSES + 1):
        run_kind(rt, MESSAGE_KIND)
        if message(db, mid)["status"] not in ("pending", "sending"):
            return passes
        rt.clock.advance(timedelta(minutes=1))
    return MAX_PASSES


@pytest.mark.parametrize("fault", CASES.values(), ids=CASES.keys())
def test_an_ambiguous_answer_ends_in_exactly_one_post_and_delivered_with_its_ts(
    rt, db, slack, fault
):
    mid = seed_message(db, channel=CHANNEL)
    delivery_id = message_delivery_id(mid, T0)
    slack.inject(fault)

    run_until_settled(rt, db, mid)

    posts = [p for p in slack.posts() if p.channel == CHANNEL and p.delivery_id == delivery_id]
    assert len(posts) == 1, [p.ts for p in posts]
    doc = message(db, mid)
    assert (doc["status"], doc.get("last_slack_ts")) == ("sent", posts[0].ts)
    entry = ledger(db)[delivery_id]
    assert (entry["status"], entry.get("slack_ts")) == ("sent", posts[0].ts)


def test_the_faults_land_where_the_cases_say(slack):
    """The BEFORE faults leave Slack without the post and the AFTER ones with it, or the
    table above would prove nothing."""
    client = WebClient(token="xoxb-proof", base_url=slack.url, retry_handlers=[])
    recorded = {}
    for name, fault in CASES.items():
        slack.reset()
        slack.inject(fault)
        with pytest.raises(SlackApiError):
            client.chat_postMessage(channel=CHANNEL, text=name)
        recorded[name] = len(slack.posts())

    assert recorded == {name: int(name.endswith("-after")) for name in CASES}


# -- the bot removed after an ambiguous post -------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "status", "code"),
    [("hold", "unconfirmed", "not_in_channel"), ("retry", "failed", "not_in_channel")],
)
def test_bot_removed_after_an_ambiguous_post_is_held_or_escalated_never_resent(
    rt, db, slack, policy, status, code
):
    mid = seed_message(db, channel=CHANNEL, on_ambiguous=policy)
    slack.inject(error_fault("fatal_error", after_post=True))
    run_kind(rt, MESSAGE_KIND)  # the post landed, Slack answered fatal_error: ambiguous
    slack.set_channel(CHANNEL, member=False)  # then the bot is removed from the channel

    run_until_settled(rt, db, mid)
    for _ in range(5):  # and nothing changes on later passes
        rt.clock.advance(timedelta(hours=1))
        run_kind(rt, MESSAGE_KIND)

    assert [p.delivery_id for p in slack.posts() if p.channel == CHANNEL] == [
        message_delivery_id(mid, T0)
    ]
    doc = message(db, mid)
    assert (doc["status"], doc["last_error"]["code"]) == (status, code)
