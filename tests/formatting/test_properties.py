"""Properties over any text a user could type: conversion never fails on it, and nothing the
author did not write as a Slack entity reaches Slack as one, broadcasts least of all."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from core.errors import DocumentError
from core.slack import delivery_metadata
from emulator.slack_standin import SlackStandIn
from formatting.slack_text import TEXT_LIMIT, SlackMessage, to_slack

# What may follow a `<` in what we send: the entities an author may write and our links.
ENTITY = re.compile(
    r"<(?:@[UW][A-Z0-9]+(?:\|[^<>\n]*)?"
    r"|#C[A-Z0-9]+(?:\|[^<>\n]*)?"
    r"|!subteam\^[A-Z0-9]+(?:\|[^<>\n]*)?"
    r"|!date\^\d+\^[^<>\n]*"
    r"|(?:https?://|mailto:)[^\s<>|]+(?:\|[^<>\n]*)?)>"
)
BROADCAST_ENTITY = re.compile(r"<!(?:channel|here|everyone)\b")
ALLOWED_BROADCAST = re.compile(r"<!(?:channel|here|everyone)(?:\|[^<>\n]*)?>")
BROADCAST_WORD = re.compile(r"(?<!\w)@(?:channel|here|everyone)\b", re.IGNORECASE)

# Fragments that exercise the parser's and the escaper's edges, mixed with arbitrary text.
FRAGMENTS = [
    "*",
    "**",
    "_",
    "__",
    "~~",
    "`",
    "```",
    "\n",
    "\n\n",
    " ",
    "  \n",
    "\\",
    "<",
    ">",
    "&",
    "&amp;",
    "&lt;",
    "|",
    "[",
    "]",
    "(",
    ")",
    "!",
    "#",
    "# ",
    "- ",
    "1. ",
    "> ",
    "- [ ] ",
    "| a | b |\n|---|---|\n",
    "---",
    ":",
    "Status:",
    "OK",
    "word",
    "@",
    "@here",
    "@Channel",
    "@everyone",
    "<!here>",
    "<!channel|c>",
    "<!everyone>",
    "<@U123ABC>",
    "<#C1|ops>",
    "<!subteam^S1|@t>",
    "<!date^1^{date}|d>",
    "<https://x.test|t>",
    "<https://x.test>",
    "https://x.test/a_b",
    "[l](https://x.test/?a=1&b=2)",
    "[l](/rel)",
    "![i](https://i.test)",
    "<script>",
    "<javascript:x|y>",
    "<mailto:a@b.test>",
    "\u200b",
    "日本",
]
SOURCES = st.one_of(
    st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=5), max_size=40).map("".join),
    st.text(max_size=300),
)


def convert(source: str, allow_broadcast: bool) -> SlackMessage | None:
    try:
        return to_slack(source, allow_broadcast=allow_broadcast)
    except DocumentError as error:
        # The only refusal possible for short text: it renders to nothing visible.
        assert error.code == "empty_text"
        return None


def sent_texts(message: SlackMessage) -> list[str]:
    assert message.blocks is not None
    return [message.text] + [block["text"]["text"] for block in message.blocks]


def stray_angle_brackets(text: str) -> list[str]:
    return [
        text[i : i + 20] for i in range(len(text)) if text[i] == "<" and not ENTITY.match(text, i)
    ]


@settings(max_examples=400, deadline=None)
@given(SOURCES)
@example("@everyone, @here and @Channel")
@example("**<!here>** `<!channel>` <script> <javascript:x|y>")
@example("| <@U1> |\n|---|\n| @here <x> |")
def test_conversion_never_raises_and_sends_no_stray_angle_bracket(source):
    message = convert(source, allow_broadcast=False)
    if message is None:
        return
    for text in sent_texts(message):
        assert stray_angle_brackets(text) == []
        assert not BROADCAST_ENTITY.search(text)
        assert not BROADCAST_WORD.search(text)


@settings(max_examples=200, deadline=None)
@given(SOURCES)
def test_allowing_broadcasts_lets_only_broadcasts_through_besides_entities(source):
    message = convert(source, allow_broadcast=True)
    if message is None:
        return
    for text in sent_texts(message):
        for stray in stray_angle_brackets(text):
            assert ALLOWED_BROADCAST.match(stray)


@settings(max_examples=200, deadline=None)
@given(SOURCES)
def test_only_text_without_a_letter_or_digit_can_render_to_nothing(source):
    message = convert(source, allow_broadcast=False)
    if message is None:
        assert not any(char.isalnum() for char in source)
    else:
        assert message.text.strip()


# -- what Slack does with it -----------------------------------------------------------------

# Long sources up to the API's 40,000 characters: a short source repeated, as paragraphs.
LONG_SOURCES = st.builds(
    lambda piece, times: ((piece or "w") + "\n\n") * times,
    SOURCES,
    st.integers(min_value=1, max_value=1500),
).filter(lambda source: len(source) <= TEXT_LIMIT)
# Slack's refusals and trims (emulator/slack_limits.py); the formatter must hit none.
SLACK_REFUSALS = {"invalid_blocks", "msg_blocks_too_long", "invalid_metadata_format"}


@pytest.fixture(scope="module")
def slack_client() -> Iterator[WebClient]:
    with SlackStandIn() as standin:
        yield WebClient(token="xoxb-formatting", base_url=standin.url, retry_handlers=[])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(st.one_of(SOURCES, LONG_SOURCES))
@example("\n\n".join("p " + "x" * 2900 for _ in range(5)))  # 14,500 characters of sections
@example("\n".join("<>&" * 10 + f" {n}" for n in range(400)))  # escaping grows it past 40,000
@example("x" * 3001)
def test_slack_takes_what_the_formatter_sends_whole_or_it_is_refused_first(slack_client, source):
    try:
        message = to_slack(source)
    except DocumentError as error:
        # Refused before posting, naming why: nothing visible, or more than Slack keeps.
        assert error.code in ("empty_text", "message_too_long"), error
        assert error.code == "empty_text" or len(source) > TEXT_LIMIT // 10, error
        return
    try:
        response = slack_client.chat_postMessage(
            channel="C0FORMAT",
            text=message.text,
            blocks=message.blocks,
            metadata=delivery_metadata("m:formatting:1"),
        )
    except SlackApiError as error:
        assert error.response["error"] not in SLACK_REFUSALS, error.response.data
        raise
    assert "warning" not in response.data  # nothing truncated: Slack kept the message whole
