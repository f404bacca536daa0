"""Every Slack answer, through the real client and the stand-in, lands in the class the
outcome table gives it."""

from __future__ import annotations

import pytest

from core.platform import Outcome
from core.slack import OUTCOMES, SlackTransport
from emulator.slack_standin import Fault


@pytest.fixture
def transport(slack):
    return SlackTransport("xoxb-test", slack.url, timeout_seconds=1)


@pytest.mark.parametrize(("code", "outcome"), sorted(OUTCOMES.items()))
def test_each_error_code_is_classified_by_the_table(slack, transport, code, outcome):
    slack.inject(Fault(kind="error", code=code))

    result = transport.post("C0123ABCD", "hi", "d1")

    assert (result.outcome, result.code) == (outcome, code)
    assert slack.posts() == []


def test_an_unlisted_error_code_is_a_definitive_failure(slack, transport):
    slack.inject(Fault(kind="error", code="some_new_code"))
    assert transport.post("C0123ABCD", "hi", "d1").outcome is Outcome.FAILED


def test_429_is_retry_later_with_slacks_retry_after(slack, transport):
    slack.inject(Fault(kind="rate_limit", retry_after=42))
    result = transport.post("C0123ABCD", "hi", "d1")
    assert (result.outcome, result.code, result.retry_after) == (
        Outcome.RETRY_LATER,
        "ratelimited",
        42,
    )


@pytest.mark.parametrize("status", [500, 502, 503])
def test_5xx_is_ambiguous(slack, transport, status):
    slack.inject(Fault(kind="server_error", status=status))
    result = transport.post("C0123ABCD", "hi", "d1")
    assert (result.outcome, result.code) == (Outcome.AMBIGUOUS, f"http_{status}")


def test_a_dropped_connection_after_receipt_is_ambiguous_and_never_reposted(slack, transport):
    slack.inject(Fault(kind="drop_after_receipt"))
    result = transport.post("C0123ABCD", "hi", "d1")
    assert result.outcome is Outcome.AMBIGUOUS
    assert slack.delivery_ids() == ["d1"]  # the SDK's retry handler would have made two


def test_a_refused_connection_is_provably_not_delivered():
    # Nothing listens on port 9 of loopback here: the request never leaves this machine.
    result = SlackTransport("xoxb-test", "http://127.0.0.1:9/api/", 1).post("C1", "hi", "d1")
    assert (result.outcome, result.code) == (Outcome.RETRY_LATER, "connection_refused")


def test_delivered_carries_the_ts_and_the_delivery_metadata(slack, transport):
    result = transport.post("C0123ABCD", "hi", "d1")
    [post] = slack.posts()
    assert (result.outcome, result.ts) == (Outcome.DELIVERED, post.ts)
    assert post.metadata == {
        "event_type": "scheduled_message",
        "event_payload": {"delivery_id": "d1"},
    }
