"""Long content as Block Kit: sections of at most 3,000 characters cut at paragraph or line
boundaries, code fences closed and reopened across a cut; blocks only while Slack takes them
(50, and 12,000 characters across them), else the whole message as text; `text` always set."""

from __future__ import annotations

import re

import pytest
from slack_sdk.models.blocks import Block

from core.errors import DocumentError
from formatting import blocks
from formatting.markdown import to_blocks
from formatting.slack_text import TEXT_LIMIT, to_slack


def section_texts(source: str) -> list[str]:
    """How the source is cut into sections, whether or not the sections are then sent."""
    return blocks.section_texts(to_blocks(source, allow_broadcast=False))


def test_paragraphs_are_packed_into_sections_and_cut_between_paragraphs():
    paragraphs = [f"paragraph {n} " + "x" * 990 for n in range(7)]
    texts = section_texts("\n\n".join(paragraphs))
    assert all(len(text) <= 3000 for text in texts)
    # Two 1,002-character paragraphs fit a section, a third does not.
    assert [text.count("paragraph") for text in texts] == [2, 2, 2, 1]
    assert "\n\n".join(texts) == "\n\n".join(paragraphs)


def test_a_long_paragraph_is_cut_between_lines():
    lines = [f"line {n:04d} " + "y" * 80 for n in range(100)]
    texts = section_texts("\n".join(lines))
    assert all(len(text) <= 3000 for text in texts)
    assert "\n".join(texts).split("\n") == lines


def test_a_cut_inside_a_code_block_closes_and_reopens_the_fence():
    code = [f"print({n})  # " + "z" * 60 for n in range(120)]
    texts = section_texts("Intro\n\n```\n" + "\n".join(code) + "\n```")
    assert len(texts) >= 3
    for text in texts[1:]:
        assert text.startswith("```\n")
    for text in texts:
        assert len(text) <= 3000
        assert text.count("```") % 2 == 0, "every section renders its code as code"
    body = [line for text in texts for line in text.split("\n") if line.startswith("print(")]
    assert body == code


def test_a_cut_inside_a_quoted_code_block_reopens_it_inside_the_quote():
    code = "\n".join(f"> step {n} " + "q" * 70 for n in range(80))
    texts = section_texts("> ```\n" + code + "\n> ```")
    assert len(texts) >= 2
    assert texts[0].endswith("\n> ```")
    assert texts[1].startswith("> ```\n")


def test_a_line_longer_than_a_section_is_cut_at_a_space_never_inside_an_entity():
    words = " ".join(["word", "<@U123ABC>", "a&b"] * 700)
    texts = section_texts(words)
    assert len(texts) >= 2
    for text in texts:
        assert len(text) <= 3000
        assert not re.search(r"<[^>]*$|^[^<]*>", text), "an entity was cut"
        assert not re.search(r"&[a-z]{0,3}$", text), "an escape was cut"


def test_a_message_longer_than_slack_keeps_is_a_message_too_long_error():
    paragraphs = ["p " + "x" * 2900 for _ in range(51)]
    with pytest.raises(DocumentError) as error:
        to_slack("\n\n".join(paragraphs))
    assert error.value.code == "message_too_long"
    assert "148," in error.value.message and "40,000" in error.value.message


def test_the_fallback_text_holds_the_whole_message_when_it_fits():
    source = "\n\n".join(f"**{n}** " + "t" * 500 for n in range(20))
    message = to_slack(source)
    assert len(message.text) < TEXT_LIMIT
    assert message.blocks is not None
    assert message.text == "\n\n".join(block["text"]["text"] for block in message.blocks)


def test_escaping_past_slacks_40000_characters_is_refused_not_cut():
    # 12,000 "<>&" characters become 52,000 characters for Slack; cut, it would lose lines.
    source = "\n".join("<>&" * 10 + f" {n}" for n in range(400))
    with pytest.raises(DocumentError) as error:
        to_slack(source)
    assert error.value.code == "message_too_long"


def test_a_message_too_long_for_blocks_goes_whole_as_text():
    # 5 sections of ~2,900: 50 blocks would do, but Slack takes 12,000 characters of blocks.
    source = "\n\n".join("p " + "x" * 2900 for _ in range(5))
    message = to_slack(source)
    assert message.blocks is None
    assert message.text == source


def test_blocks_up_to_slacks_cumulative_limit_are_sent():
    source = "\n\n".join("p " + "x" * 2000 for _ in range(5))  # 10,018 characters
    message = to_slack(source)
    assert message.blocks is not None and len(message.blocks) == 5


def test_blocks_are_valid_block_kit():
    message = to_slack("# Title\n\n- a\n- b\n\n```\ncode\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |")
    assert message.blocks is not None
    for block in message.blocks:
        assert Block.parse(block).to_dict() == block  # type: ignore[union-attr]


def test_text_that_renders_to_nothing_is_an_empty_text_error():
    with pytest.raises(DocumentError) as error:
        to_slack("#")
    assert error.value.code == "empty_text"
