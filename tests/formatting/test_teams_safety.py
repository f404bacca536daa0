"""What user text becomes in Teams: never a tag, never a mention the author did not write as
one, never a broadcast unless allowed; and a card Teams takes, or a refusal up front."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from microsoft_teams.cards import AdaptiveCard

from core.errors import DocumentError
from formatting.teams_card import ACTIVITY_LIMIT, activity_size, to_teams
from formatting.teams_message import TeamsMessage

WJ = "\u2060"
TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
BROADCAST_WORD = re.compile(r"(?<!\w)@(?:team|channel|here|everyone)\b", re.IGNORECASE)


def strings(value: Any) -> Iterator[str]:
    """Every string in the card, keys aside."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)


def shown_texts(message: TeamsMessage) -> list[str]:
    """What Teams renders as text: the card's strings but its entities', and the fallback."""
    card = {key: value for key, value in message.card.items() if key != "msteams"}
    return [message.text, *strings(card)]


def test_a_teams_mention_becomes_an_at_tag_and_its_entity():
    message = to_teams("<@29:1abc|Ann Lee> and <@29:1abc|Ann Lee> and <@29:2def>, on call")
    assert message.card["body"][0]["text"] == (
        "<at>Ann Lee</at> and <at>Ann Lee</at> and <at>29:2def</at>, on call"
    )
    entities = [
        {
            "type": "mention",
            "text": "<at>Ann Lee</at>",
            "mentioned": {"id": "29:1abc", "name": "Ann Lee"},
        },
        {
            "type": "mention",
            "text": "<at>29:2def</at>",
            "mentioned": {"id": "29:2def", "name": "29:2def"},
        },
    ]
    assert message.mentions == entities
    assert message.card["msteams"] == {"entities": entities}
    # The fallback names them without a tag: a notification shows no markup.
    assert message.text == "@Ann Lee and @Ann Lee and @29:2def, on call"


def test_a_mention_name_carries_no_tag_and_no_markup():
    message = to_teams("<@29:1a|*Ann*_Lee [x]> hi")
    assert message.card["body"][0]["text"] == "<at>Ann Lee x</at> hi"
    assert message.mentions[0]["mentioned"] == {"id": "29:1a", "name": "Ann Lee x"}


def test_two_people_shown_by_one_name_are_two_distinct_mentions():
    message = to_teams("<@29:1a|Ann> and <@29:2b|Ann>, then <@29:1a|Ann>")
    assert message.card["body"][0]["text"] == (
        "<at>Ann</at> and <at>Ann (29:2b)</at>, then <at>Ann</at>"
    )
    assert [(e["text"], e["mentioned"]["id"]) for e in message.mentions] == [
        ("<at>Ann</at>", "29:1a"),
        ("<at>Ann (29:2b)</at>", "29:2b"),
    ]


@pytest.mark.parametrize(
    "member",
    [
        "29:1a-B_c.d",
        "8:orgid:87d349ed-44d7-43e1-9a83-5f2406dee5bd",
        "87d349ed-44d7-43e1-9a83-5f2406dee5bd",
    ],
)
def test_every_teams_user_id_form_is_a_mention(member):
    message = to_teams(f"your turn, <@{member}>")
    assert message.mentions == [
        {
            "type": "mention",
            "text": f"<at>{member}</at>",
            "mentioned": {"id": member, "name": member},
        }
    ]


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        ("<at>Boss</at> approve", f"<{WJ}at>Boss<{WJ}/at> approve"),
        ("<AT>Boss</AT>", f"<{WJ}AT>Boss<{WJ}/AT>"),
        ("&lt;at&gt;Boss&#60;/at>", f"<{WJ}at>Boss<{WJ}/at>"),
        # `<` and `at>` from two tokens (text, a Slack date's fallback) never meet as a tag.
        ("<<!date^1^{d}|at>>", f"<{WJ}at>"),
        ("<@U123ABC> (a Slack id)", "@U123ABC (a Slack id)"),
        ("<@someone>", "<@someone>"),
    ],
)
def test_nothing_else_the_author_types_becomes_a_mention(source, shown):
    message = to_teams(source)
    assert message.card["body"][0]["text"] == shown
    assert message.mentions == []
    assert "msteams" not in message.card


@pytest.mark.parametrize(
    ("source", "shown", "fallback"),
    [
        ("<script>alert(1)</script>", f"<{WJ}script>alert(1)<{WJ}/script>", None),
        ("<img src=x onerror=y>", f"<{WJ}img src=x onerror=y>", None),
        ("<!-- hidden -->", f"<{WJ}!-- hidden -->", None),
        ("a < b > c & d", "a < b > c & d", None),
        ("`<b>code</b>`", f"`<{WJ}b>code<{WJ}/b>`", f"<{WJ}b>code<{WJ}/b>"),
    ],
)
def test_html_is_inert_in_the_card_and_in_the_fallback(source, shown, fallback):
    message = to_teams(source)
    assert message.card["body"][0]["text"] == shown
    assert message.text == (fallback if fallback is not None else shown)
    for text in shown_texts(message):
        assert not TAG_START.search(text)


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        ("@team and @Channel", f"@{WJ}team and @{WJ}Channel"),
        ("ping @here, @everyone", f"ping @{WJ}here, @{WJ}everyone"),
        ("<!channel> <!here|here>", f"@{WJ}channel @{WJ}here"),
        ("# @team", f"@{WJ}team"),
        ("`@channel`", f"`@{WJ}channel`"),
        ("ops@channel.test stays an address", "ops@channel.test stays an address"),
    ],
)
def test_broadcast_words_are_neutralised(source, shown):
    assert to_teams(source).card["body"][0]["text"] == shown


def test_a_tag_or_broadcast_split_by_markup_does_not_form_in_the_fallback():
    message = to_teams("<*at*>Boss<*/at*> @<!date^1^{d}|here>")
    assert message.card["body"][0]["text"] == f"<*at*>Boss<*/at*> @{WJ}here"
    assert message.text == f"<{WJ}at>Boss<{WJ}/at> @{WJ}here"


def test_broadcast_words_pass_when_the_message_allows_them_but_never_as_a_mention():
    message = to_teams("<!here> & @channel", allow_broadcast=True)
    assert message.card["body"][0]["text"] == "@here & @channel"
    # Teams cannot mention a team or channel from a bot's card: there is no entity to make.
    assert message.mentions == []


def test_markup_characters_the_author_typed_show_as_typed():
    message = to_teams("a \\*b\\* \\_c\\_ [x] d\\\\e")
    assert message.card["body"][0]["text"] == "a \\*b\\* \\_c\\_ \\[x\\] d\\\\e"
    assert message.text == "a *b* _c_ [x] d\\e"


@pytest.mark.parametrize("source", ["", "   ", "\n\n", " \n \t"])
def test_text_that_renders_to_nothing_is_refused(source):
    with pytest.raises(DocumentError) as error:
        to_teams(source)
    assert error.value.code == "empty_text"


def test_a_message_over_teams_size_limit_is_refused_naming_the_sizes():
    source = "\n\n".join("p " + "x" * 998 for _ in range(30))  # 30,000 characters
    with pytest.raises(DocumentError) as error:
        to_teams(source)
    assert error.value.code == "message_too_long"
    assert "bytes as UTF-16" in error.value.message and "98,304" in error.value.message


def test_size_is_counted_as_teams_counts_it_in_utf16():
    ascii_text, wide_text = "x" * 10_000, "\U0001f600" * 5_000  # 10,000 UTF-16 units each
    ascii_size, wide_size = activity_size(to_teams(ascii_text)), activity_size(to_teams(wide_text))
    assert ascii_size == wide_size > 40_000  # text and card: 2 copies, 2 bytes a unit
    assert ascii_size < ACTIVITY_LIMIT


def test_a_long_message_under_the_limit_is_sent_whole():
    source = "\n\n".join(f"paragraph {n} " + "y" * 900 for n in range(22))
    message = to_teams(source)
    assert len(message.card["body"]) == 22
    assert message.text == source


def test_the_card_is_valid_for_the_teams_sdk():
    source = "# T\n\n- a\n  - b\n\n```\nc\n```\n\n> q\n\n| a |\n|---|\n| 1 |\n\n<@29:x|X>"
    card = to_teams(source).card
    assert AdaptiveCard.model_validate(card).model_dump(exclude_none=True) == card


# -- any text a user could type -----------------------------------------------------------------

FRAGMENTS = [
    "*",
    "**",
    "_",
    "~~",
    "`",
    "```\n",
    "\n",
    "\n\n",
    "  \n",
    "\\",
    "<",
    ">",
    "&",
    "|",
    "[",
    "]",
    "(",
    ")",
    "!",
    "# ",
    "- ",
    "1. ",
    "> ",
    "- [ ] ",
    "| a | b |\n|---|---|\n",
    "---",
    "@",
    "@here",
    "@team",
    "@Channel",
    "@everyone",
    "<!here>",
    "<!channel|c>",
    "<at>",
    "</at>",
    "<at>Boss</at>",
    "<*at*>",
    "<!date^1^{d}|at>",
    "<!date^1^{d}|here>",
    "&lt;at&gt;",
    "&#60;b>",
    "<AT>",
    "<b>",
    "</b>",
    "<!--",
    "<?x",
    "<@29:1abc>",
    "<@29:1abc|Ann>",
    "<@29:2def|Ann>",
    "<@29:9zz|<at>>",
    "<@U123ABC>",
    "<#C1|ops>",
    "<!subteam^S1|@t>",
    "<https://x.test|t>",
    "[l](https://x.test/?a=1&b=(2))",
    "[l](/rel)",
    "![i](https://i.test)",
    "snake_case",
    "word",
    "日本",
    "\U0001f600",
    "\u200b",
]
SOURCES = st.one_of(
    st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=5), max_size=40).map("".join),
    st.text(max_size=300),
)


def convert(source: str, allow_broadcast: bool) -> TeamsMessage | None:
    try:
        return to_teams(source, allow_broadcast=allow_broadcast)
    except DocumentError as error:
        assert error.code == "empty_text"  # the only refusal possible for short text
        return None


@settings(max_examples=400, deadline=None)
@given(SOURCES)
@example("<at>Boss</at> <@29:1abc|<at>x</at>> @here")
@example("| <@29:1abc> | @team |\n|---|---|\n| <b> | `<at>` |")
def test_no_tag_no_foreign_mention_and_no_broadcast_reaches_teams(source):
    message = convert(source, allow_broadcast=False)
    if message is None:
        return
    entity_texts = {entity["text"] for entity in message.mentions}
    for text in shown_texts(message):
        for entity_text in entity_texts:
            text = text.replace(entity_text, "")
        assert not TAG_START.search(text), text
        assert not BROADCAST_WORD.search(text), text
    for entity in message.mentions:
        # A person is mentioned only where the source names them as a Teams mention.
        assert f"<@{entity['mentioned']['id']}" in source
    assert message.card.get("msteams", {}).get("entities", []) == message.mentions
    # Teams pairs each <at> tag with the entity of the same text: one text, one person.
    assert len({entity["text"] for entity in message.mentions}) == len(message.mentions)
    json.dumps(message.card)  # plain JSON, as the transport sends it


@settings(max_examples=200, deadline=None)
@given(SOURCES)
def test_only_text_without_a_letter_or_digit_can_render_to_nothing(source):
    message = convert(source, allow_broadcast=True)
    if message is None:
        assert not any(char.isalnum() for char in source)


# Long sources: a short source repeated as paragraphs, up to Slack's 40,000 characters.
LONG_SOURCES = st.builds(
    lambda piece, times: ((piece or "w") + "\n\n") * times,
    SOURCES,
    st.integers(min_value=1, max_value=1500),
).filter(lambda source: len(source) <= 40_000)


@settings(max_examples=60, deadline=None)
@given(LONG_SOURCES)
@example("\n\n".join("p " + "x" * 998 for _ in range(23)))  # just under the limit
@example("<@29:1a|Ann> " * 3000)  # one entity, many mentions of it
def test_a_long_message_fits_teams_whole_or_is_refused_up_front(source):
    try:
        message = to_teams(source)
    except DocumentError as error:
        assert error.code in ("empty_text", "message_too_long"), error
        return
    assert activity_size(message) <= ACTIVITY_LIMIT - 4 * 1024
    assert len(message.mentions) == len({json.dumps(m, sort_keys=True) for m in message.mentions})
