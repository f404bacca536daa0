"""The Slack stand-in, seen only through the real slack_sdk WebClient (and, for the control
endpoints, plain HTTP), so what passes here is what the processor will see."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from core.clock import FixedClock
from emulator.slack_standin import Fault, RecordedPost, SlackStandIn

METADATA = {"event_type": "scheduled_message", "event_payload": {"delivery_id": "d1"}}
TOKEN = "xoxb-test"
T0 = datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)  # epoch 1700000000


@pytest.fixture
def standin() -> Iterator[SlackStandIn]:
    with SlackStandIn(clock=FixedClock(T0)) as running:
        yield running


def client(standin: SlackStandIn, token: str | None = TOKEN, timeout: float = 5) -> WebClient:
    return WebClient(
        token=token,
        base_url=standin.url,
        retry_handlers=[],
        timeout=timeout,  # type: ignore[arg-type]  # slack_sdk annotates int; urllib takes float
    )


def post(standin: SlackStandIn, channel: str = "C1", text: str = "hello", **kwargs: Any) -> Any:
    return client(standin).chat_postMessage(channel=channel, text=text, **kwargs)


def control(standin: SlackStandIn, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", standin.port, timeout=5)
    try:
        payload = None if body is None else json.dumps(body)
        conn.request(method, f"/_control/{path}", body=payload)
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def test_post_with_metadata_is_recorded_and_visible_in_history(standin: SlackStandIn) -> None:
    response = post(standin, metadata=METADATA)

    assert response["ok"] and response["channel"] == "C1"
    assert response["ts"] == "1700000000.000000"
    [recorded] = standin.posts()
    assert (recorded.channel, recorded.text, recorded.ts) == ("C1", "hello", response["ts"])
    assert recorded.metadata == METADATA
    assert standin.delivery_ids() == ["d1"]

    slack = client(standin)
    with_meta = slack.conversations_history(channel="C1", include_all_metadata=True)
    without = slack.conversations_history(channel="C1", include_all_metadata=False)
    assert with_meta["messages"][0]["metadata"] == METADATA
    assert with_meta["messages"][0]["type"] == "message"
    assert "metadata" not in without["messages"][0]
    assert without["messages"][0]["text"] == "hello"


def test_form_encoded_post_with_metadata_as_json_string(standin: SlackStandIn) -> None:
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "*hi*"}}]
    client(standin).api_call(
        "chat.postMessage",
        params={"channel": "C2", "metadata": json.dumps(METADATA), "blocks": json.dumps(blocks)},
    )

    [recorded] = standin.posts()
    assert recorded.metadata == METADATA and recorded.blocks == blocks and recorded.text is None


def test_posts_without_delivery_id_report_none(standin: SlackStandIn) -> None:
    post(standin)
    post(standin, metadata={"event_type": "other", "event_payload": {}})

    assert standin.delivery_ids() == [None, None]


@pytest.mark.filterwarnings("ignore:The top-level `text` argument is missing")
def test_bad_requests_answer_like_slack(standin: SlackStandIn) -> None:
    slack = client(standin)
    calls = [
        lambda: slack.chat_postMessage(channel="C1"),
        lambda: slack.chat_postMessage(channel="C1", text="x", metadata={"x": 1}),
        lambda: slack.api_call("chat.postMessage", params={"channel": "C1", "metadata": "{"}),
        lambda: slack.api_call("conversations.history", params={"channel": "C1", "cursor": "?"}),
        lambda: slack.api_call("foo.bar"),
    ]
    errors = []
    for call in calls:
        with pytest.raises(SlackApiError) as raised:
            call()
        errors.append(raised.value.response["error"])

    assert errors == [
        "no_text",
        "invalid_metadata_schema",
        "invalid_metadata_format",
        "invalid_cursor",
        "unknown_method",
    ]
    assert standin.posts() == []


def test_history_is_newest_first_bounded_and_paginated(standin: SlackStandIn) -> None:
    ts = [post(standin, text=f"m{i}")["ts"] for i in range(5)]
    post(standin, channel="C9")
    slack = client(standin)

    assert ts == sorted(ts) and len(set(ts)) == 5  # the fixed clock still yields unique ts
    bounded = slack.conversations_history(channel="C1", oldest=ts[0], latest=ts[4])
    assert [m["text"] for m in bounded["messages"]] == ["m3", "m2", "m1"]
    inclusive = slack.conversations_history(channel="C1", oldest=ts[3], inclusive=True)
    assert [m["text"] for m in inclusive["messages"]] == ["m4", "m3"]

    pages, cursor = [], None
    while True:
        page = slack.conversations_history(channel="C1", limit=2, cursor=cursor)
        pages.append([m["text"] for m in page["messages"]])
        if not page["has_more"]:
            break
        cursor = page["response_metadata"]["next_cursor"]
    assert pages == [["m4", "m3"], ["m2", "m1"], ["m0"]]


def test_chat_update_replaces_text_and_unknown_ts_is_not_found(standin: SlackStandIn) -> None:
    ts = post(standin, metadata=METADATA)["ts"]
    slack = client(standin)

    updated = slack.chat_update(channel="C1", ts=ts, text="edited")
    with pytest.raises(SlackApiError) as raised:
        slack.chat_update(channel="C1", ts="1.000001", text="edited")

    assert updated["message"]["text"] == "edited"
    assert [(p.text, p.delivery_id) for p in standin.posts()] == [("edited", "d1")]
    assert raised.value.response["error"] == "message_not_found"


@pytest.mark.parametrize("code", ["channel_not_found", "not_in_channel", "is_archived"])
def test_error_fault_answers_200_with_the_code_and_records_nothing(
    standin: SlackStandIn, code: str
) -> None:
    standin.inject(Fault(kind="error", code=code, channel="C1"))

    with pytest.raises(SlackApiError) as raised:
        post(standin)
    post(standin, channel="C2")

    assert raised.value.response.status_code == 200
    assert raised.value.response["error"] == code
    assert [p.channel for p in standin.posts()] == ["C2"]


def test_rate_limit_fault_is_a_429_with_retry_after(standin: SlackStandIn) -> None:
    standin.inject(Fault(kind="rate_limit", retry_after=7))

    with pytest.raises(SlackApiError) as raised:
        post(standin)

    response = raised.value.response
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "7"
    assert response["error"] == "ratelimited"
    assert standin.posts() == []


def test_server_error_fault_with_html_or_json_body(standin: SlackStandIn) -> None:
    standin.inject(Fault(kind="server_error", times=1))
    standin.inject(Fault(kind="server_error", status=503, body='{"ok": false, "error": "x"}'))

    with pytest.raises(SlackApiError) as html:
        post(standin)
    with pytest.raises(SlackApiError) as jsonish:
        post(standin)

    assert html.value.response.status_code == 500
    assert "Received a response in a non-JSON format" in html.value.response["error"]
    assert jsonish.value.response.status_code == 503
    assert jsonish.value.response["error"] == "x"
    assert standin.posts() == []


def test_slow_fault_times_the_client_out_although_the_post_landed(standin: SlackStandIn) -> None:
    standin.inject(Fault(kind="slow", delay=1.5))

    with pytest.raises(TimeoutError):
        client(standin, timeout=0.5).chat_postMessage(channel="C1", text="hi", metadata=METADATA)

    assert standin.delivery_ids() == ["d1"]


def test_drop_after_receipt_is_a_connection_error_although_the_post_landed(
    standin: SlackStandIn,
) -> None:
    standin.inject(Fault(kind="drop_after_receipt", times=1))

    with pytest.raises(http.client.RemoteDisconnected):
        post(standin, metadata=METADATA)
    post(standin)

    assert standin.delivery_ids() == ["d1", None]


def test_times_limits_a_fault_and_reset_clears_faults(standin: SlackStandIn) -> None:
    standin.inject(Fault(kind="error", code="internal_error", times=2))
    outcomes = []
    for _ in range(3):
        try:
            outcomes.append(post(standin)["ok"])
        except SlackApiError as error:
            outcomes.append(error.response["error"])
    standin.inject(Fault(kind="error", code="fatal_error"))
    standin.reset()
    post(standin)

    assert outcomes == ["internal_error", "internal_error", True]
    assert len(standin.posts()) == 1


def test_fault_on_another_method_leaves_posts_alone(standin: SlackStandIn) -> None:
    standin.inject(Fault(kind="error", code="missing_scope", method="conversations.history"))
    post(standin)

    with pytest.raises(SlackApiError) as raised:
        client(standin).conversations_history(channel="C1")

    assert raised.value.response["error"] == "missing_scope"
    assert len(standin.posts()) == 1


def test_auth_is_checked(standin: SlackStandIn) -> None:
    identity = client(standin).auth_test()
    errors = []
    for token in (None, "xoxp-user-token"):
        with pytest.raises(SlackApiError) as raised:
            client(standin, token=token).chat_postMessage(channel="C1", text="x")
        errors.append(raised.value.response["error"])

    assert (identity["user_id"], identity["team_id"], identity["bot_id"]) == (
        "UBOT",
        "T0001",
        "B0001",
    )
    assert errors == ["not_authed", "invalid_auth"]
    assert standin.posts() == []


def test_control_endpoints(standin: SlackStandIn) -> None:
    fault = {"kind": "error", "code": "channel_not_found", "channel": "C1", "times": 1}
    assert control(standin, "POST", "faults", fault) == (200, {"ok": True})
    assert control(standin, "POST", "faults", {"kind": "error"})[0] == 400
    assert control(standin, "POST", "faults", {"kind": "slow", "delay": 1, "oops": 1})[0] == 400

    with pytest.raises(SlackApiError):
        post(standin)
    post(standin, metadata=METADATA)
    status, posts = control(standin, "GET", "posts")

    assert status == 200
    assert [RecordedPost.from_json(p) for p in posts] == standin.posts()
    assert posts[0]["metadata"] == METADATA
    assert control(standin, "POST", "reset") == (200, {"ok": True})
    assert control(standin, "GET", "posts") == (200, [])


def test_fault_validation() -> None:
    with pytest.raises(ValueError, match="needs a code"):
        Fault(kind="error")
    with pytest.raises(ValueError, match="takes no delay"):
        Fault(kind="error", code="x", delay=1)
    with pytest.raises(ValueError, match="5xx"):
        Fault(kind="server_error", status=404)
    with pytest.raises(ValueError, match="unknown fault kind"):
        Fault(kind="boom")  # type: ignore[arg-type]


def test_runs_as_a_process() -> None:
    root = Path(__file__).resolve().parents[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "emulator.slack_standin", "--port", "0"],
        cwd=root,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = json.loads(process.stdout.readline())["url"]
        slack = WebClient(token=TOKEN, base_url=url, retry_handlers=[], timeout=5)
        assert slack.chat_postMessage(channel="C1", text="hi")["ok"]
    finally:
        process.terminate()
        assert process.wait(timeout=5) == 0


def test_latency_delays_every_answer_after_the_call_took_effect() -> None:
    with SlackStandIn(clock=FixedClock(T0), latency=0.2) as slow:
        started = time.monotonic()
        client(slow).chat_postMessage(channel="C1", text="hi", metadata=METADATA)
        assert time.monotonic() - started >= 0.2
        # The post is recorded before the wait, as Slack has it before its answer arrives.
        standin_posts = slow.posts()
        assert [p.delivery_id for p in standin_posts] == ["d1"]
        with pytest.raises(TimeoutError):
            client(slow, timeout=0.1).chat_postMessage(channel="C1", text="again")
        assert len(slow.posts()) == 2


def test_negative_latency_is_refused() -> None:
    with pytest.raises(ValueError, match="latency"):
        SlackStandIn(latency=-1)
