"""The Slack stand-in, seen only through the real slack_sdk WebClient (and, for the control
endpoints, plain HTTP), so what passes here is what the processor will see."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from core.clock import FixedClock
from emulator.slack_standin import Fault, RecordedPost, SlackStandIn
from tests.fixtures.runtime import ROOT

METADATA = {"event_type": "scheduled_message", "event_payload": {"delivery_id": "d1"}}
TOKEN = "xoxb-test"
T0 = datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)  # epoch 1700000000


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def standin(clock: FixedClock) -> Iterator[SlackStandIn]:
    with SlackStandIn(clock=clock) as running:
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


@pytest.mark.emulator
def test_runs_as_a_process() -> None:
    root = ROOT
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


def slack_error(call: Any) -> Any:
    with pytest.raises(SlackApiError) as raised:
        call()
    return raised.value.response


def walk_history(standin: SlackStandIn, channel: str = "C1", **kwargs: Any) -> list[list[str]]:
    """Every page's texts, following next_cursor until it is empty, as a caller must."""
    slack, pages, cursor = client(standin), [], ""
    while True:
        page = slack.conversations_history(channel=channel, cursor=cursor or None, **kwargs)
        pages.append([m["text"] for m in page["messages"]])
        cursor = page["response_metadata"]["next_cursor"]
        assert page["has_more"] == bool(cursor)
        if not cursor:
            return pages


# -- channels --------------------------------------------------------------------------------


def test_channel_state_answers_posts_and_history_with_slacks_codes(standin: SlackStandIn) -> None:
    post(standin, channel="CARCH")
    standin.set_channel("CGONE", exists=False)
    standin.set_channel("CARCH", archived=True)
    standin.set_channel("COUT", member=False)
    slack = client(standin)

    posting = [
        slack_error(lambda c=c: post(standin, channel=c))["error"]
        for c in ("CGONE", "CARCH", "COUT")
    ]
    reading = [
        slack_error(lambda c=c: slack.conversations_history(channel=c))["error"]
        for c in ("CGONE", "COUT")
    ]
    archived = slack.conversations_history(channel="CARCH")

    assert posting == ["channel_not_found", "is_archived", "not_in_channel"]
    assert reading == ["channel_not_found", "not_in_channel"]
    assert [m["text"] for m in archived["messages"]] == ["hello"]  # still readable by a member
    assert [p.channel for p in standin.posts()] == ["CARCH"]
    assert post(standin, channel="CNEVERSET")["ok"]


def test_bot_removed_mid_test_over_http(standin: SlackStandIn) -> None:
    post(standin)
    body = {"channel": "C1", "exists": True, "archived": False, "member": False}

    assert control(standin, "POST", "channels", body) == (200, {"ok": True})
    assert slack_error(lambda: client(standin).conversations_history(channel="C1"))["error"] == (
        "not_in_channel"
    )
    assert control(standin, "POST", "channels", {"channel": "C1", "member": True})[0] == 200
    assert client(standin).conversations_history(channel="C1")["messages"]
    assert control(standin, "POST", "channels", {"member": False})[0] == 400
    assert control(standin, "POST", "channels", {"channel": "C1", "member": "no"})[0] == 400


# -- faults after the post -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "status", "error"),
    [
        (Fault(kind="error", code="fatal_error", after_post=True), 200, "fatal_error"),
        (Fault(kind="server_error", status=503, after_post=True), 503, None),
    ],
)
def test_fault_after_post_records_the_post_then_answers_the_fault(
    standin: SlackStandIn, fault: Fault, status: int, error: str | None
) -> None:
    standin.inject(fault)

    response = slack_error(lambda: post(standin, metadata=METADATA))
    history = client(standin).conversations_history(channel="C1")

    assert response.status_code == status
    assert error is None or response["error"] == error
    assert standin.delivery_ids() == ["d1"]
    assert [m["ts"] for m in history["messages"]] == [standin.posts()[0].ts]


def test_after_post_is_only_for_error_and_server_error(standin: SlackStandIn) -> None:
    for kind, extra in (("rate_limit", {}), ("slow", {"delay": 1.0}), ("drop_after_receipt", {})):
        with pytest.raises(ValueError, match="after_post applies to error and server_error"):
            Fault(kind=kind, after_post=True, **extra)  # type: ignore[arg-type]
    spec = {"kind": "error", "code": "internal_error", "after_post": True, "times": 1}

    assert control(standin, "POST", "faults", spec) == (200, {"ok": True})
    assert slack_error(lambda: post(standin))["error"] == "internal_error"
    assert len(standin.posts()) == 1


# -- pagination ------------------------------------------------------------------------------


def test_page_max_caps_every_page_whatever_limit_asks(standin: SlackStandIn) -> None:
    for i in range(40):
        post(standin, text=f"m{i}")
    standin.set_history_page_max(15)

    pages = walk_history(standin, limit=200)
    default = client(standin).conversations_history(channel="C1")

    assert [len(p) for p in pages] == [15, 15, 10]
    assert [t for p in pages for t in p] == [f"m{i}" for i in reversed(range(40))]
    assert len(default["messages"]) == 15


def test_short_pages_are_short_or_empty_while_more_remain(
    standin: SlackStandIn, clock: FixedClock
) -> None:
    for i in range(30):
        post(standin, text=f"m{i}")
    standin.set_short_pages(True)
    slack = client(standin)

    first = slack.conversations_history(channel="C1", limit=10)
    clock.advance(timedelta(minutes=10))  # a cursor holds no server state: it keeps working
    second = slack.conversations_history(
        channel="C1", limit=10, cursor=first["response_metadata"]["next_cursor"]
    )
    pages = walk_history(standin, limit=10)

    assert len(first["messages"]) == 5 and first["has_more"]
    assert second["messages"] == [] and second["has_more"]
    assert second["response_metadata"]["next_cursor"]
    assert [len(p) for p in pages] == [5, 0, 10, 5, 10]  # the last page is the rest
    assert [t for p in pages for t in p] == [f"m{i}" for i in reversed(range(30))]


def test_end_of_history_is_an_empty_next_cursor(standin: SlackStandIn) -> None:
    post(standin)

    page = client(standin).conversations_history(channel="C1", limit=5)

    assert page["has_more"] is False
    assert page["response_metadata"] == {"next_cursor": ""}


def test_pagination_control_endpoint(standin: SlackStandIn) -> None:
    for i in range(4):
        post(standin, text=f"m{i}")

    assert control(standin, "POST", "pagination", {"page_max": 2, "short_pages": False})[0] == 200
    assert [len(p) for p in walk_history(standin)] == [2, 2]
    assert control(standin, "POST", "pagination", {"page_max": 0})[0] == 400


# -- rate limits -----------------------------------------------------------------------------


def test_rate_limit_is_a_sliding_window_on_the_standins_clock(
    standin: SlackStandIn, clock: FixedClock
) -> None:
    for i in range(3):
        post(standin, text=f"m{i}")
    standin.set_rate_limit("conversations.history", 2, per_seconds=60)
    slack = client(standin)

    first = slack.conversations_history(channel="C1", limit=1)
    clock.advance(timedelta(seconds=20))
    slack.conversations_history(
        channel="C1", limit=1, cursor=first["response_metadata"]["next_cursor"]
    )
    refused = [slack_error(lambda: slack.conversations_history(channel="C1")) for _ in range(3)]
    posted = post(standin)  # other methods are not limited
    clock.advance(timedelta(seconds=39, milliseconds=500))
    still = slack_error(lambda: slack.conversations_history(channel="C1"))
    clock.advance(timedelta(milliseconds=500))
    again = slack.conversations_history(channel="C1")

    assert [r.status_code for r in refused] == [429, 429, 429]
    assert {r["error"] for r in refused} == {"ratelimited"}
    assert [r.headers["Retry-After"] for r in refused] == ["40", "40", "40"]  # refused: uncounted
    assert posted["ok"] and again["ok"]
    assert still.headers["Retry-After"] == "1"  # half a second left rounds up to whole seconds


def test_rate_limit_can_be_cleared_and_set_over_http(standin: SlackStandIn) -> None:
    spec = {"method": "chat.postMessage", "calls": 1, "per_seconds": 60}

    assert control(standin, "POST", "rate_limits", spec) == (200, {"ok": True})
    post(standin)
    assert slack_error(lambda: post(standin)).status_code == 429
    standin.set_rate_limit("chat.postMessage", None)
    assert post(standin)["ok"]
    assert control(standin, "POST", "rate_limits", {"method": "x", "calls": 0})[0] == 400


# -- clock skew ------------------------------------------------------------------------------


def test_ts_come_from_the_standins_clock_plus_skew(clock: FixedClock) -> None:
    with SlackStandIn(clock=clock, skew=timedelta(seconds=-3)) as standin:
        behind = post(standin)["ts"]
        standin.set_skew(timedelta(seconds=2.5))
        ahead = post(standin, channel="C2")["ts"]
        assert control(standin, "POST", "skew", {"seconds": 10})[0] == 200
        later = post(standin, channel="C3")["ts"]

    assert (behind, ahead, later) == ("1699999997.000000", "1700000002.500000", "1700000010.000000")


# -- authorship ------------------------------------------------------------------------------


def test_our_posts_carry_our_bot_and_app_in_history(standin: SlackStandIn) -> None:
    ts = post(standin, metadata=METADATA)["ts"]

    [message] = client(standin).conversations_history(channel="C1")["messages"]
    [recorded] = standin.posts()

    assert (message["ts"], message["user"], message["bot_id"], message["app_id"]) == (
        ts,
        "UBOT",
        "B0001",
        "A0001",
    )
    assert message["bot_profile"]["app_id"] == "A0001"
    assert (recorded.user, recorded.bot_id, recorded.app_id) == ("UBOT", "B0001", "A0001")
    assert "app_id" not in client(standin).auth_test().data  # as Slack's auth.test schema


def test_messages_from_others_are_in_history_with_their_own_authorship(
    standin: SlackStandIn,
) -> None:
    ours = post(standin, metadata=METADATA)["ts"]
    theirs = standin.add_message(
        "C1", "copy", metadata=METADATA, user="U0APP2", bot_id="B0002", app_id="A0002"
    )
    status, answer = control(standin, "POST", "messages", {"channel": "C1", "text": "by hand"})

    messages = client(standin).conversations_history(channel="C1", include_all_metadata=True)[
        "messages"
    ]

    assert status == 200 and answer["ok"]
    assert [(m["ts"], m.get("bot_id"), m.get("app_id")) for m in messages] == [
        (answer["ts"], None, None),
        (theirs, "B0002", "A0002"),
        (ours, "B0001", "A0001"),
    ]
    assert messages[1]["metadata"] == METADATA and messages[0]["user"] == "U0OTHER"
    assert standin.delivery_ids() == ["d1", "d1", None]


def test_old_shaped_recorded_posts_still_load() -> None:
    old = {"channel": "C1", "ts": "1.000001", "text": "x", "blocks": None, "metadata": None}

    loaded = RecordedPost.from_json({**old, "received_at": 0.0})

    assert (loaded.user, loaded.bot_id, loaded.app_id) == ("UBOT", "B0001", "A0001")


# -- limits ----------------------------------------------------------------------------------


def section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


@pytest.mark.parametrize(
    ("blocks", "error"),
    [
        ([section("x")] * 51, "invalid_blocks"),
        ([section("x" * 3001)], "invalid_blocks"),
        ([{"type": "carousel_of_doom"}], "invalid_blocks"),
        ([{"text": "no type"}], "invalid_blocks"),
        ([section("x" * 3000)] * 5, "msg_blocks_too_long"),
    ],
    ids=["51-blocks", "section-3001", "unknown-type", "no-type", "13500-characters"],
)
def test_blocks_slack_refuses_are_refused_on_post_and_update(
    standin: SlackStandIn, blocks: list[Any], error: str
) -> None:
    ts = post(standin)["ts"]
    slack = client(standin)

    posting = slack_error(lambda: slack.chat_postMessage(channel="C1", text="t", blocks=blocks))
    updating = slack_error(lambda: slack.chat_update(channel="C1", ts=ts, text="t", blocks=blocks))

    assert (posting["error"], updating["error"]) == (error, error)
    assert [p.text for p in standin.posts()] == ["hello"]


def test_blocks_at_the_limits_are_accepted(standin: SlackStandIn) -> None:
    at_limits = [section("x" * 3000)] * 4 + [{"type": "divider"}] * 46  # 50 blocks, 12,000

    assert post(standin, text="t", blocks=at_limits)["ok"]
    assert standin.posts()[0].blocks == at_limits


def test_text_over_40000_is_truncated_with_slacks_warning(standin: SlackStandIn) -> None:
    response = post(standin, text="x" * 40_001)
    ts = post(standin, text="short")["ts"]
    updated = client(standin).chat_update(channel="C1", ts=ts, text="y" * 50_000)
    plain = post(standin, text="x" * 40_000)

    assert response["warning"] == "message_truncated"
    assert response["response_metadata"]["warnings"] == ["message_truncated"]
    assert updated["warning"] == "message_truncated"
    assert "warning" not in plain.data
    assert [len(p.text or "") for p in standin.posts()] == [40_000, 40_000, 40_000]


@pytest.mark.parametrize("event_type", ["", "scheduled message", "sched-uled", "x" * 256, "é"])
def test_malformed_event_type_is_invalid_metadata_format(
    standin: SlackStandIn, event_type: str
) -> None:
    metadata = {"event_type": event_type, "event_payload": {"delivery_id": "d1"}}

    assert slack_error(lambda: post(standin, metadata=metadata))["error"] == (
        "invalid_metadata_format"
    )
    assert standin.posts() == []
    assert post(standin, metadata={**metadata, "event_type": "x" * 255})["ok"]


# --- conversations.open: direct messages to people ------------------------------------------


def open_dm(standin: SlackStandIn, users: str) -> Any:
    return client(standin).conversations_open(users=users)


def open_error(standin: SlackStandIn, users: str) -> str:
    with pytest.raises(SlackApiError) as caught:
        open_dm(standin, users)
    return str(caught.value.response["error"])


def test_conversations_open_answers_the_same_dm_for_the_same_person(
    standin: SlackStandIn,
) -> None:
    first = open_dm(standin, "U0PERSON1")
    again = open_dm(standin, "U0PERSON1")
    other = open_dm(standin, "W0PERSON2")

    dm = first["channel"]["id"]
    assert first.data == {"ok": True, "channel": {"id": dm}}  # Slack's answer shape
    assert dm.startswith("D") and dm == standin.dm_channel("U0PERSON1")
    assert again.data == {"ok": True, "no_op": True, "already_open": True, "channel": {"id": dm}}
    assert other["channel"]["id"] not in (dm, None)
    post(standin, channel=dm, text="hi", metadata=METADATA)
    history = client(standin).conversations_history(channel=dm, include_all_metadata=True)
    assert [m["metadata"] for m in history["messages"]] == [METADATA]


def test_conversations_open_refuses_people_slack_cannot_dm(standin: SlackStandIn) -> None:
    standin.set_user("U0NOBODY1", exists=False)
    standin.set_user("U0LEFT001", deactivated=True)
    standin.set_user("U0OTHERBOT", bot=True)

    assert open_error(standin, "U0NOBODY1") == "user_not_found"
    assert open_error(standin, "C0123ABCD") == "user_not_found"  # not a user id
    assert open_error(standin, "U0LEFT001") == "user_disabled"
    assert open_error(standin, "U0OTHERBOT") == "cannot_dm_bot"
    assert open_error(standin, "UBOT") == "cannot_dm_bot"  # the bot itself
    assert open_error(standin, "") == "users_list_not_supplied"

    standin.reset()  # back to everyone known and active (but the bot)
    assert open_dm(standin, "U0LEFT001")["channel"]["id"] == standin.dm_channel("U0LEFT001")
    assert open_error(standin, "UBOT") == "cannot_dm_bot"


def test_faults_and_rate_limits_apply_to_conversations_open(standin: SlackStandIn) -> None:
    standin.inject(Fault("error", method="conversations.open", code="fatal_error", times=1))
    standin.inject(Fault("rate_limit", method="conversations.open", retry_after=7, times=1))

    assert open_error(standin, "U0PERSON1") == "fatal_error"
    with pytest.raises(SlackApiError) as caught:
        open_dm(standin, "U0PERSON1")
    assert caught.value.response.status_code == 429
    assert caught.value.response.headers["Retry-After"] == "7"
    assert open_dm(standin, "U0PERSON1")["channel"]["id"] == standin.dm_channel("U0PERSON1")
    standin.set_rate_limit("conversations.open", 1)
    open_dm(standin, "U0PERSON2")
    assert open_error(standin, "U0PERSON3") == "ratelimited"


def test_users_control_endpoint(standin: SlackStandIn) -> None:
    status, body = control(standin, "POST", "users", {"user": "U0LEFT001", "deactivated": True})
    assert (status, body) == (200, {"ok": True, "dm": standin.dm_channel("U0LEFT001")})
    assert open_error(standin, "U0LEFT001") == "user_disabled"

    status, body = control(standin, "POST", "users", {"user": "U1", "away": True})
    assert status == 400 and "away" in body["error"]
    status, body = control(standin, "POST", "users", {"user": "U1", "exists": "no"})
    assert status == 400
