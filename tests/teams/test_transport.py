"""The Teams transport through the real Teams SDK and MSAL against the Teams stand-in: posts,
updates, each outcome the stand-in can reproduce, the per-conversation 429 wait, token
caching, and Graph reads for proof of delivery."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.clock import FixedClock
from core.platform import Lookup, Outcome, Witness
from core.settings import Settings
from core.teams import ConversationRef, TeamsTransport, TenantPace, wrapped_card
from emulator.teams_faults import Fault
from emulator.teams_standin import TeamsStandIn
from formatting.teams_message import TeamsMessage

T0 = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)
CHANNEL = "19:general0001@thread.tacv2"
TEAM = "5a6b7c8d-0000-4000-8000-00000000a001"
GROUP_CHAT = "19:groupchat0001@thread.v2"


def card(text: str) -> dict[str, Any]:
    return {
        "type": "AdaptiveCard",
        "version": "1.5",
        "body": [{"type": "TextBlock", "text": text, "wrap": True}],
    }


HELLO = TeamsMessage("Standup in 5", card("Standup in **5**"))


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def teams(clock: FixedClock) -> Iterator[TeamsStandIn]:
    with TeamsStandIn(clock=clock) as running:
        running.channel(CHANNEL, aad_group_id=TEAM)
        running.group_chat(GROUP_CHAT)
        yield running


@pytest.fixture
def refs(teams: TeamsStandIn) -> dict[str, ConversationRef]:
    """The stored teams_conversations, as the transport's lookup answers them."""
    return {
        CHANNEL: ConversationRef(teams.service_url, "channel", TEAM, CHANNEL),
        GROUP_CHAT: ConversationRef(teams.service_url, "groupChat"),
    }


def settings_for(teams: TeamsStandIn, **env: str) -> Settings:
    return Settings.from_env({"SLACK_BOT_TOKEN": "xoxb-test", **teams.env(), **env})


@pytest.fixture
def transport(teams, refs, clock) -> TeamsTransport:
    return TeamsTransport(settings_for(teams), refs.get, timeout_seconds=2, clock=clock)


def test_a_post_is_one_activity_carrying_its_delivery_id(teams, transport):
    result = transport.post(CHANNEL, HELLO, "d1")

    [recorded] = teams.activities(CHANNEL)
    assert (result.outcome, result.ts) == (Outcome.DELIVERED, recorded.id)
    assert recorded.delivery_id == "d1"
    assert recorded.activity["summary"] == "Standup in 5"
    [attachment] = recorded.activity["attachments"]
    [container] = attachment["content"]["body"]
    assert container["items"] == [{"type": "TextBlock", "text": "Standup in **5**", "wrap": True}]


def test_mentions_go_in_the_cards_msteams_entities(teams, transport):
    mention = {"type": "mention", "text": "<at>Ana</at>", "mentioned": {"id": "29:1ana"}}
    message = TeamsMessage("Ana's turn", card("<at>Ana</at>'s turn"), [mention])

    transport.post(CHANNEL, message, "d1")

    [recorded] = teams.activities(CHANNEL)
    assert recorded.activity["attachments"][0]["content"]["msteams"] == {"entities": [mention]}


def test_an_update_replaces_the_card_in_place_keeping_the_delivery_id(teams, transport):
    posted = transport.post(CHANNEL, HELLO, "d1")

    result = transport.update(CHANNEL, str(posted.ts), TeamsMessage("Done", card("Done")), "d1")

    assert (result.outcome, result.ts) == (Outcome.DELIVERED, posted.ts)
    [recorded] = teams.activities(CHANNEL)
    assert recorded.delivery_id == "d1"
    assert recorded.activity["summary"] == "Done"


def test_one_token_serves_many_posts(teams, transport):
    for n in range(5):
        assert transport.post(CHANNEL, HELLO, f"d{n}").outcome is Outcome.DELIVERED
    assert teams.token_grants() == 1
    assert len(teams.activities(CHANNEL)) == 5


@pytest.mark.parametrize(
    ("ref", "code"),
    [(None, "conversation_not_installed"), ("removed", "conversation_removed")],
)
def test_a_conversation_not_ours_fails_without_calling_teams(teams, refs, transport, ref, code):
    if ref is None:
        del refs[CHANNEL]
    else:
        refs[CHANNEL] = replace(refs[CHANNEL], removed=True)

    result = transport.post(CHANNEL, HELLO, "d1")

    assert (result.outcome, result.code) == (Outcome.FAILED, code)
    assert (teams.calls(), teams.token_grants()) == (0, 0)


@pytest.mark.parametrize(
    ("roster", "code"),
    [
        ({"installed": False}, "BotNotInConversationRoster"),
        ({"blocked": True}, "ConversationBlockedByUser"),
    ],
)
def test_a_roster_refusal_fails_with_teams_code(teams, transport, roster, code):
    teams.set_roster(CHANNEL, **roster)

    result = transport.post(CHANNEL, HELLO, "d1")

    assert (result.outcome, result.code) == (Outcome.FAILED, code)
    assert teams.activities() == []


def test_a_conversation_teams_does_not_know_fails(teams, refs, transport):
    refs["19:gone@thread.tacv2"] = refs[CHANNEL]

    result = transport.post("19:gone@thread.tacv2", HELLO, "d1")

    assert (result.outcome, result.code) == (Outcome.FAILED, "ConversationNotFound")


def test_a_malformed_card_fails_as_a_bad_argument(teams, transport):
    broken = TeamsMessage("x", {"type": "AdaptiveCard", "body": []})  # no version

    result = transport.post(CHANNEL, broken, "d1")

    assert (result.outcome, result.code) == (Outcome.FAILED, "BadArgument")
    assert teams.activities() == []


def test_an_update_of_an_unknown_activity_fails(teams, transport):
    result = transport.update(CHANNEL, "1764752400000", HELLO, "d1")
    assert (result.outcome, result.code) == (Outcome.FAILED, "ActivityNotFoundInConversation")


def test_a_refused_connection_is_provably_not_delivered(teams, refs, transport):
    # Nothing listens on port 9 of loopback here: the request never leaves this machine.
    refs[CHANNEL] = replace(refs[CHANNEL], service_url="http://127.0.0.1:9/teams/")

    result = transport.post(CHANNEL, HELLO, "d1")

    assert (result.outcome, result.code) == (Outcome.RETRY_LATER, "connection_refused")


def test_a_secret_the_token_endpoint_refuses_fails_before_any_post(teams, refs, clock):
    settings = settings_for(teams, TEAMS_APP_PASSWORD="wrong")
    transport = TeamsTransport(settings, refs.get, timeout_seconds=2, clock=clock)

    result = transport.post(CHANNEL, HELLO, "d1")

    assert (result.outcome, result.code) == (Outcome.FAILED, "token_refused")
    assert teams.calls() == 0


def test_an_unreachable_token_endpoint_is_retried_later(teams, refs, clock):
    unreachable = "https://127.0.0.1:9/tenant/oauth2/v2.0/token"
    settings = settings_for(teams, TEAMS_TOKEN_URL=unreachable)
    transport = TeamsTransport(settings, refs.get, timeout_seconds=2, clock=clock)

    result = transport.post(CHANNEL, HELLO, "d1")

    assert (result.outcome, result.code) == (Outcome.RETRY_LATER, "token_unavailable")
    assert teams.calls() == 0


# -- outcomes through the stand-in's faults ------------------------------------------------


@pytest.mark.parametrize(
    ("status", "code", "outcome"),
    [
        (412, "PreconditionFailed", Outcome.RETRY_LATER),
        (403, "BotDisabledByAdmin", Outcome.FAILED),
        (401, "BotNotRegistered", Outcome.FAILED),
        (500, "ServiceError", Outcome.AMBIGUOUS),
    ],
)
def test_an_error_teams_answers_before_recording_is_classified(
    teams, transport, status, code, outcome
):
    teams.inject(Fault("error", status=status, code=code, times=1))

    result = transport.post(CHANNEL, HELLO, "d1")

    assert (result.outcome, result.code) == (outcome, code)
    assert teams.activities() == []


@pytest.mark.parametrize("status", [502, 504])
def test_a_gateway_error_before_the_record_is_ambiguous_and_not_retried(teams, transport, status):
    teams.inject(Fault("server_error", status=status, times=1))

    result = transport.post(CHANNEL, HELLO, "d1")

    assert result.outcome is Outcome.AMBIGUOUS
    assert teams.calls("send") == 1


@pytest.mark.parametrize("status", [502, 504])
def test_a_gateway_error_after_the_record_is_ambiguous_with_one_message(teams, transport, status):
    teams.inject(Fault("server_error", status=status, after_record=True, times=1))

    result = transport.post(CHANNEL, HELLO, "d1")

    assert result.outcome is Outcome.AMBIGUOUS
    assert teams.delivery_ids() == ["d1"]
    assert teams.calls("send") == 1


def test_a_dropped_connection_after_the_record_is_ambiguous_and_never_reposted(teams, transport):
    teams.inject(Fault("drop", after_record=True, times=1))

    result = transport.post(CHANNEL, HELLO, "d1")

    assert (result.outcome, result.code) == (Outcome.AMBIGUOUS, "connection_error")
    # No retry below us (the SDK's httpx client, ours with retries=0): one call, one message.
    assert teams.delivery_ids() == ["d1"]
    assert teams.calls("send") == 1


def test_a_dropped_connection_before_the_record_is_ambiguous_too(teams, transport):
    teams.inject(Fault("drop", times=1))

    result = transport.post(CHANNEL, HELLO, "d1")

    assert result.outcome is Outcome.AMBIGUOUS  # we cannot tell it from a drop after
    assert teams.activities() == []


def test_a_timeout_after_the_record_is_ambiguous(teams, refs, clock):
    fast = TeamsTransport(settings_for(teams), refs.get, timeout_seconds=0.5, clock=clock)
    teams.inject(Fault("timeout", delay=2, after_record=True, times=1))

    result = fast.post(CHANNEL, HELLO, "d1")

    assert (result.outcome, result.code) == (Outcome.AMBIGUOUS, "timeout")
    assert teams.delivery_ids() == ["d1"]


def test_a_message_over_teams_size_limit_fails(teams, transport):
    huge = TeamsMessage("big", card("x" * 120_000))

    result = transport.post(CHANNEL, huge, "d1")

    assert (result.outcome, result.code) == (Outcome.FAILED, "MessageSizeTooBig")


# -- 429: the conversation waits out Retry-After ------------------------------------------


def test_a_429_holds_the_conversation_until_its_retry_after(teams, transport, clock):
    teams.inject(Fault("rate_limit", retry_after=30, times=1))

    first = transport.post(CHANNEL, HELLO, "d1")
    assert (first.outcome, first.code, first.retry_after) == (
        Outcome.RETRY_LATER,
        "ratelimited",
        30,
    )
    assert transport.waiting_until(CHANNEL) == T0 + timedelta(seconds=30)

    clock.advance(timedelta(seconds=10))
    held = transport.post(CHANNEL, HELLO, "d2")
    assert (held.outcome, held.code, held.retry_after) == (Outcome.RETRY_LATER, "ratelimited", 20)
    assert teams.calls("send", CHANNEL) == 1  # the held post never reached Teams
    # Another conversation is not held.
    assert transport.post(GROUP_CHAT, HELLO, "d3").outcome is Outcome.DELIVERED

    clock.advance(timedelta(seconds=20))
    assert transport.waiting_until(CHANNEL) is None
    assert transport.post(CHANNEL, HELLO, "d2").outcome is Outcome.DELIVERED
    assert teams.delivery_ids() == ["d3", "d2"]


def test_teams_own_limit_of_seven_a_second_is_met_and_waited_out(teams, transport, clock):
    results = [transport.post(CHANNEL, HELLO, f"d{n}") for n in range(9)]

    assert [r.outcome for r in results[:7]] == [Outcome.DELIVERED] * 7
    assert {(r.outcome, r.code) for r in results[7:]} == {(Outcome.RETRY_LATER, "ratelimited")}
    assert teams.calls("send") == 8  # the 8th met the 429; the 9th waited without a call
    assert len(teams.activities(CHANNEL)) == 7

    wait = results[7].retry_after
    assert wait is not None
    clock.advance(timedelta(seconds=wait))
    assert transport.post(CHANNEL, HELLO, "d7").outcome is Outcome.DELIVERED


def test_updates_share_the_conversations_wait(teams, transport, clock):
    posted = transport.post(CHANNEL, HELLO, "d1")
    teams.inject(Fault("rate_limit", retry_after=5, operation="update", times=1))

    assert transport.update(CHANNEL, str(posted.ts), HELLO, "d1").code == "ratelimited"
    assert transport.post(CHANNEL, HELLO, "d2").code == "ratelimited"
    assert teams.calls("send") == 1


# -- Graph: pages and proof ------------------------------------------------------------------


def window(clock: FixedClock) -> tuple[datetime, datetime]:
    now = clock.now()
    return now - timedelta(minutes=1), now + timedelta(minutes=2)


def read_all(
    transport: TeamsTransport, conversation: str, clock: FixedClock
) -> list[dict[str, Any]]:
    oldest, latest = window(clock)
    messages: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = transport.history_page(conversation, oldest, latest, cursor)
        assert page.error is None, page.error
        messages.extend(page.messages)
        if page.next_cursor is None:
            return messages
        cursor = page.next_cursor


def proof(transport: TeamsTransport, messages: list[dict[str, Any]], delivery_id: str) -> list[str]:
    return [p for m in messages if (p := transport.proves(m, delivery_id)) is not None]


def test_our_post_is_proven_through_graph_by_its_activity_id(teams, transport, clock):
    teams.grant(CHANNEL, "ChannelMessage.Read.Group")
    posted = transport.post(CHANNEL, HELLO, "d1")
    transport.post(CHANNEL, HELLO, "d2")

    messages = read_all(transport, CHANNEL, clock)

    assert proof(transport, messages, "d1") == [posted.ts]
    assert proof(transport, messages, "d9") == []


def test_a_foreign_bot_or_a_person_carrying_the_id_is_not_proof(teams, transport, clock):
    teams.grant(CHANNEL, "ChannelMessage.Read.Group")
    copied = wrapped_card(HELLO, "d1")
    teams.add_message(CHANNEL, card=copied, app_id="11111111-2222-3333-4444-555555555555")
    teams.add_message(CHANNEL, card=copied)  # a person pasting our card
    teams.add_message(CHANNEL, "did d1 go out?")

    messages = read_all(transport, CHANNEL, clock)

    assert len(messages) == 3
    assert proof(transport, messages, "d1") == []


def test_graph_pages_are_followed_to_our_post(teams, transport, clock):
    teams.grant(CHANNEL, "ChannelMessage.Read.Group")
    posted = transport.post(CHANNEL, HELLO, "d1")
    for n in range(120):
        teams.add_message(CHANNEL, f"chatter {n}")
    oldest, latest = window(clock)

    first = transport.history_page(CHANNEL, oldest, latest, None)
    assert (len(first.messages), first.next_cursor is not None) == (50, True)
    assert proof(transport, list(first.messages), "d1") == []

    messages = read_all(transport, CHANNEL, clock)
    assert len(messages) == 121
    assert proof(transport, messages, "d1") == [posted.ts]


def test_reading_stops_at_the_first_page_older_than_the_window(teams, transport, clock):
    teams.grant(CHANNEL, "ChannelMessage.Read.Group")
    for n in range(120):
        teams.add_message(CHANNEL, f"yesterday {n}")
    clock.advance(timedelta(days=1))
    posted = transport.post(CHANNEL, HELLO, "d1")
    oldest, latest = window(clock)

    page = transport.history_page(CHANNEL, oldest, latest, None)

    assert page.next_cursor is None  # 70 older messages were never read
    assert proof(transport, list(page.messages), "d1") == [posted.ts]
    assert teams.calls("graph") == 1


def test_a_group_chat_is_read_before_the_windows_end(teams, transport, clock):
    teams.grant(GROUP_CHAT, "ChatMessage.Read.Chat")
    posted = transport.post(GROUP_CHAT, HELLO, "d1")
    oldest, latest = window(clock)

    before = transport.history_page(GROUP_CHAT, oldest - timedelta(hours=1), oldest, None)
    within = transport.history_page(GROUP_CHAT, oldest, latest, None)

    assert proof(transport, list(before.messages), "d1") == []
    assert proof(transport, list(within.messages), "d1") == [posted.ts]


def test_a_personal_chat_is_read_by_its_graph_chat_id(teams, refs, transport, clock):
    person = teams.personal("29:1ana", user_aad_id="aad-ana")
    refs[person.id] = ConversationRef(
        teams.service_url, "personal", chat_id=teams.graph_chat_id(person.id)
    )
    teams.grant(person.id, "ChatMessage.Read.Chat")
    posted = transport.post(person.id, HELLO, "d1")

    assert proof(transport, read_all(transport, person.id, clock), "d1") == [posted.ts]


def test_without_the_rsc_permission_the_conversation_is_unreadable(teams, transport, clock):
    transport.post(CHANNEL, HELLO, "d1")
    oldest, latest = window(clock)

    page = transport.history_page(CHANNEL, oldest, latest, None)

    assert page.error is not None
    assert (page.error.outcome, page.error.code) == (Outcome.FAILED, "Forbidden")


@pytest.mark.parametrize("status", [500, 503])
def test_a_graph_server_error_is_asked_again_later(teams, transport, clock, status):
    teams.grant(CHANNEL, "ChannelMessage.Read.Group")
    teams.inject(Fault("server_error", status=status, operation="graph", times=1))
    oldest, latest = window(clock)

    failed = transport.history_page(CHANNEL, oldest, latest, None)
    again = transport.history_page(CHANNEL, oldest, latest, None)

    assert failed.error is not None and failed.error.outcome is Outcome.AMBIGUOUS
    assert again.error is None


def test_a_graph_429_holds_that_conversations_reads_only(teams, transport, clock):
    teams.grant(CHANNEL, "ChannelMessage.Read.Group")
    teams.grant(GROUP_CHAT, "ChatMessage.Read.Chat")
    teams.inject(Fault("rate_limit", retry_after=4, operation="graph", times=1))
    oldest, latest = window(clock)

    limited = transport.history_page(CHANNEL, oldest, latest, None)
    held = transport.history_page(CHANNEL, oldest, latest, None)

    assert limited.error is not None and limited.error.retry_after == 4
    assert held.error is not None and held.error.code == "ratelimited"
    assert teams.calls("graph") == 1
    assert transport.history_page(GROUP_CHAT, oldest, latest, None).error is None
    assert transport.post(CHANNEL, HELLO, "d1").outcome is Outcome.DELIVERED  # posts go on
    clock.advance(timedelta(seconds=4))
    assert transport.history_page(CHANNEL, oldest, latest, None).error is None


def test_a_cursor_that_is_not_graphs_is_refused_without_a_call(teams, transport, clock):
    teams.grant(CHANNEL, "ChannelMessage.Read.Group")
    oldest, latest = window(clock)

    page = transport.history_page(CHANNEL, oldest, latest, "https://evil.example/v1.0/x")

    assert page.error is not None and page.error.code == "invalid_cursor"
    assert teams.calls("graph") == 0


def test_one_graph_token_serves_every_read(teams, transport, clock):
    teams.grant(CHANNEL, "ChannelMessage.Read.Group")
    for n in range(120):
        teams.add_message(CHANNEL, f"chatter {n}")

    read_all(transport, CHANNEL, clock)

    assert teams.calls("graph") == 3
    assert teams.token_grants() == 1


def test_a_short_or_empty_page_does_not_end_the_window(teams, transport, clock):
    teams.grant(CHANNEL, "ChannelMessage.Read.Group")
    teams.set_short_pages(True)
    posted = transport.post(CHANNEL, HELLO, "d1")
    for n in range(120):
        teams.add_message(CHANNEL, f"chatter {n}")

    messages = read_all(transport, CHANNEL, clock)

    assert len(messages) == 121
    assert proof(transport, messages, "d1") == [posted.ts]


def test_the_seams_proof_finds_our_post_and_logs_another_apps_copy(teams, transport, clock, capsys):
    teams.grant(CHANNEL, "ChannelMessage.Read.Group")
    posted = transport.post(CHANNEL, HELLO, "d1")
    other_app = "11111111-2222-3333-4444-555555555555"
    teams.add_message(CHANNEL, card=wrapped_card(HELLO, "d2"), app_id=other_app)
    messages = read_all(transport, CHANNEL, clock)

    found = transport.proof(CHANNEL, messages, "d1")
    copied = transport.proof(CHANNEL, messages, "d2")

    assert found == Lookup(Witness.FOUND, ts=posted.ts)
    assert copied is None
    [warning] = [
        json.loads(line)
        for line in capsys.readouterr().out.splitlines()
        if "another app carries this delivery_id" in line
    ]
    assert (warning["delivery_id"], warning["app_id"]) == ("d2", other_app)


def test_one_process_posts_at_most_forty_a_second_to_one_tenant() -> None:
    """Teams allows an app 50 requests a second per tenant: the transport spaces its calls
    to one tenant 25 ms apart on its clock, and another tenant's are not held by them."""
    clock = FixedClock(T0)
    pace = TenantPace()
    for _ in range(41):
        pace.take("contoso", clock)
    pace.take("fabrikam", clock)
    assert clock.now() - T0 == timedelta(seconds=1)  # 40 intervals of 25 ms
