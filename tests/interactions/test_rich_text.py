"""What a person types in the `/schedule` modal's rich text box is the message posted:
Slack's rich_text as our Markdown (interactions.rich_text), and that Markdown as Slack
shows it again (formatting.render)."""

from __future__ import annotations

from typing import Any

from formatting.render import render
from interactions.rich_text import to_markdown


def _text(text: str, **style: bool) -> dict[str, Any]:
    return {"type": "text", "text": text, **({"style": style} if style else {})}


def _rich(*elements: dict[str, Any]) -> dict[str, Any]:
    return {"type": "rich_text", "elements": list(elements)}


def _section(*elements: dict[str, Any]) -> dict[str, Any]:
    return {"type": "rich_text_section", "elements": list(elements)}


def _posted(rich: dict[str, Any]) -> str:
    return render("slack", to_markdown(rich)).text


def test_styles_links_and_mentions_become_markdown() -> None:
    rich = _rich(
        _section(
            _text("Release ", bold=True),
            _text("today", italic=True),
            _text(" not ", strike=True),
            _text("make ship", code=True),
            _text(" see "),
            {"type": "link", "url": "https://example.com/notes", "text": "notes"},
            _text(" "),
            {"type": "user", "user_id": "U0ALICE00"},
            _text(" in "),
            {"type": "channel", "channel_id": "C0GENERAL"},
            _text(" "),
            {"type": "emoji", "name": "tada"},
        )
    )

    assert to_markdown(rich) == (
        "**Release** *today* ~~not~~ `make ship` see [notes](https://example.com/notes)"
        " <@U0ALICE00> in <#C0GENERAL> :tada:"
    )
    assert _posted(rich) == (
        "*Release* _today_ ~not~ `make ship` see <https://example.com/notes|notes>"
        " <@U0ALICE00> in <#C0GENERAL> :tada:"
    )


def test_lists_code_blocks_and_quotes_keep_their_shape() -> None:
    rich = _rich(
        _section(_text("Agenda")),
        {
            "type": "rich_text_list",
            "style": "ordered",
            "indent": 0,
            "elements": [_section(_text("Demo")), _section(_text("Retro"))],
        },
        {
            "type": "rich_text_list",
            "style": "bullet",
            "indent": 1,
            "elements": [_section(_text("notes", bold=True))],
        },
        {"type": "rich_text_preformatted", "elements": [_text("make *all*\nmake test")]},
        {"type": "rich_text_quote", "elements": [_text("ship it")]},
    )

    assert to_markdown(rich) == (
        "Agenda\n\n1. Demo\n2. Retro\n\n    - **notes**\n\n```\nmake *all*\nmake test\n```"
        "\n\n> ship it"
    )


def test_what_looks_like_markdown_is_posted_as_typed() -> None:
    rich = _rich(
        _section(_text("2 * 3 = 6, a_b_c, <b>, [x](y) and ~tilde~")),
        _section(_text("- not a list")),
    )

    posted = _posted(rich)

    assert posted == "2 * 3 = 6, a_b_c, &lt;b&gt;, [x](y) and ~tilde~\n\n- not a list"


def test_anything_but_rich_text_is_no_text() -> None:
    assert to_markdown({"type": "plain_text", "text": "x"}) == ""
    assert to_markdown(_rich({"type": "rich_text_section", "elements": "x"})) == ""
