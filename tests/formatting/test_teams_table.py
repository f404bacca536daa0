"""The Teams formatting table: one row per Markdown construct, with the card body Teams is
sent for it (docs/formatting.md's Teams table, row for row).

Teams' TextBlock reads `**bold**`, `_italic_`/`*italic*`, `- ` and `1. ` lists and
`[text](url)` links; everything else is the Adaptive Card element that shows it."""

from __future__ import annotations

from typing import Any

import pytest

from formatting.teams_card import to_teams

NBSP = "\u00a0"
WJ = "\u2060"


def tb(text: str, **fields: Any) -> dict[str, Any]:
    return {"type": "TextBlock", "text": text, "wrap": True, **fields}


def code(*lines: str) -> dict[str, Any]:
    return {
        "type": "Container",
        "items": [tb(line, fontType="Monospace", spacing="None") for line in lines],
    }


def indented(*items: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "ColumnSet",
        "spacing": "None",
        "columns": [
            {"type": "Column", "width": "12px"},
            {"type": "Column", "width": "stretch", "items": list(items)},
        ],
    }


def cell(text: str) -> dict[str, Any]:
    return {"type": "TableCell", "items": [tb(text)]}


TABLE = [
    ("paragraph", "plain words", [tb("plain words")]),
    ("bold", "**bold** text", [tb("**bold** text")]),
    ("bold underscores", "__bold__ text", [tb("**bold** text")]),
    ("italic", "an *italic* word", [tb("an *italic* word")]),
    ("italic underscores", "an _italic_ word", [tb("an *italic* word")]),
    ("bold inside a word", "foo**bar**baz", [tb("foo**bar**baz")]),
    # CommonMark would not close `**Status:**OK`; the colon moves out so it stays bold.
    ("bold ending in punctuation before a letter", "**Status:**OK", [tb("**Status**:OK")]),
    ("bold starting with punctuation after a letter", "OK**(beta)**", [tb("OK(**beta**)")]),
    ("strikethrough keeps its tildes", "~~gone~~ now", [tb("~~gone~~ now")]),
    ("inline code keeps its backticks", "run `make *all*`", [tb("run `make *all*`")]),
    ("link", "[docs](https://x.test/a)", [tb("[docs](https://x.test/a)")]),
    ("autolink", "<https://x.test>", [tb("[https://x.test](https://x.test)")]),
    ("mail autolink", "<a@b.test>", [tb("[a@b.test](mailto:a@b.test)")]),
    ("relative link shows its text", "[home](/x)", [tb("home")]),
    (
        "image is a link to it",
        "![chart](https://x.test/c.png)",
        [tb("[chart](https://x.test/c.png)")],
    ),
    ("heading 1", "# Title", [tb("Title", weight="Bolder", size="Large")]),
    ("heading 2", "## Part", [tb("Part", weight="Bolder", size="Medium")]),
    ("heading 3", "### Step", [tb("Step", weight="Bolder", size="Default")]),
    ("bullet list", "- a\n- b", [tb("- a\r- b")]),
    ("numbered list keeps numbers", "3. c\n4. d", [tb("3. c\r4. d")]),
    ("task list", "- [ ] todo\n- [x] done", [tb("- ☐ todo\r- ☑ done")]),
    ("nested list is indented", "- a\n  - b\n- c", [tb("- a"), indented(tb("- b")), tb("- c")]),
    ("code keeps runs of spaces", "```\nk   = 1\n```", [code(f"k{NBSP} {NBSP}= 1")]),
    ("code block, spaces kept", "```\nx = 1\n  *y*\n```", [code("x = 1", f"{NBSP * 2}\\*y\\*")]),
    (
        "blockquote",
        "> said\n> twice",
        [{"type": "Container", "style": "emphasis", "items": [tb("said\n\ntwice")]}],
    ),
    ("rule is a separator", "a\n\n---\n\nb", [tb("a"), tb("b", separator=True)]),
    ("a rule with nothing after it is a line", "a\n\n***", [tb("a"), tb("─" * 10)]),
    ("line break", "a  \nb", [tb("a\n\nb")]),
    ("soft break", "a\nb", [tb("a\n\nb")]),
    ("Teams mention", "<@29:1abc|Ann> is on call", [tb("<at>Ann</at> is on call")]),
    ("Slack channel entity is its name", "see <#C1|ops>", [tb("see #ops")]),
    ("Slack user entity is text", "ask <@U123>", [tb("ask @U123")]),
    ("Slack link entity", "<https://x.test|docs>", [tb("[docs](https://x.test)")]),
    ("a star between spaces stays as typed", "2 \\* 3", [tb("2 * 3")]),
    ("a star that could pair is escaped", "a\\*b\\*c", [tb("a\\*b\\*c")]),
    ("brackets stay brackets", "\\[draft\\]", [tb("\\[draft\\]")]),
    ("snake_case stays", "snake_case_name", [tb("snake_case_name")]),
    ("underscores inside a word stay", "my__init__func", [tb("my__init__func")]),
    ("a number and a dot stay text", "2024\\. was good", [tb("2024\\. was good")]),
    ("HTML is inert", "<b>x</b>", [tb(f"<{WJ}b>x<{WJ}/b>")]),
    ("typed <at> is no mention", "<at>Boss</at>", [tb(f"<{WJ}at>Boss<{WJ}/at>")]),
    ("broadcast word neutralised", "@channel look", [tb(f"@{WJ}channel look")]),
]


@pytest.mark.parametrize(("construct", "markdown", "body"), TABLE, ids=[row[0] for row in TABLE])
def test_each_construct_becomes_what_teams_shows(construct, markdown, body):
    assert to_teams(markdown).card["body"] == body


def test_a_markdown_table_becomes_a_table_element():
    body = to_teams("| name | n |\n|:--|--:|\n| **a** | 1 |\n| b |\n").card["body"]
    assert body == [
        {
            "type": "Table",
            "firstRowAsHeaders": True,
            "columns": [
                {"width": 1.0, "horizontalCellContentAlignment": "Left"},
                {"width": 1.0, "horizontalCellContentAlignment": "Right"},
            ],
            "rows": [
                {"type": "TableRow", "cells": [cell("name"), cell("n")]},
                {"type": "TableRow", "cells": [cell("**a**"), cell("1")]},
                {"type": "TableRow", "cells": [cell("b"), {"type": "TableCell", "items": []}]},
            ],
        }
    ]


def test_the_card_is_an_adaptive_card_teams_renders():
    card = to_teams("hi").card
    assert card["type"] == "AdaptiveCard"
    assert card["version"] == "1.5"  # Teams needs 1.5 for Action.Execute; Table is 1.5
    assert "msteams" not in card  # no mention, no entities
