"""Markdown → the body of one Teams Adaptive Card, by walking the same markdown-it-py tree
as Slack's renderer (formatting/parser.py, with Teams mentions read too), block by block.

Teams' TextBlock Markdown has bold, italic, `-` and `1.` lists and links only; headers,
tables, preformatted text and blockquotes are not read (Microsoft, "Format cards in Teams",
https://learn.microsoft.com/en-us/microsoftteams/platform/task-modules-and-cards/cards/cards-format,
read 2026-12-03). So each construct is the card element that shows it:

- a paragraph is a TextBlock, a heading a bolder one (larger for `#` and `##`);
- a list is a TextBlock of `- ` / `1. ` lines (numbers kept, `☐` / `☑` for tasks); what an
  item holds beyond its first paragraph (a nested list, more paragraphs) follows in a
  ColumnSet whose narrow first column indents it;
- code is one monospace TextBlock per line, leading spaces kept as no-break spaces;
- a blockquote is an `emphasis` Container of its blocks;
- a table is an Adaptive Card `Table` (schema 1.5), first row as headers, alignment kept;
- a rule is a separator line above the next block.

The plain-text fallback holds the same content without markup or mentions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final, Literal

from markdown_it.tree import SyntaxTreeNode
from microsoft_teams.cards import (
    AdaptiveCard,
    CardElement,
    Column,
    ColumnDefinition,
    ColumnSet,
    Container,
    Mention,
    Table,
    TableCell,
    TableRow,
    TeamsCardProperties,
    TextBlock,
)

from formatting.parser import parse
from formatting.teams_escape import escape_line_starts, inert, markdown_text
from formatting.teams_inline import LINE_BREAK, Inline, Mentions, plain_inline, render_inline

# Teams wants 1.5 for Action.Execute ("Work with Universal Actions for Adaptive Cards");
# Table is 1.5 too (adaptivecards.io/explorer/Table.html); both read 2026-12-03.
CARD_VERSION: Final[Literal["1.5"]] = "1.5"
_HEADING_SIZES: dict[str, Any] = {"h1": "Large", "h2": "Medium"}
_TASK_BOXES = {True: "☑ ", False: "☐ "}
_PLAIN_BULLETS = ("•", "◦", "▪")
_INDENT = "12px"
_NBSP = "\u00a0"
_RULE = "─" * 10
_SPACE_RUN = re.compile(r" {2,}")
_ALIGN: dict[str, Any] = {"left": "Left", "center": "Center", "right": "Right"}


@dataclass
class Rendered:
    """A run of blocks: the card elements and the plain-text lines that stand for them."""

    elements: list[CardElement]
    lines: list[str]


def render_card(source: str, *, allow_broadcast: bool) -> tuple[dict[str, Any], str, Mentions]:
    """The card (as JSON), its plain-text fallback and the mentions its text holds."""
    ctx = Inline(allow_broadcast, Mentions())
    body = _blocks(parse(source, teams=True).children, ctx, depth=0)
    card = AdaptiveCard(version=CARD_VERSION, body=body.elements)
    if ctx.mentions.entities:
        entities = [Mention.model_validate(entity) for entity in ctx.mentions.entities]
        card.msteams = TeamsCardProperties(entities=entities)
    return card.model_dump(exclude_none=True), "\n".join(body.lines).strip("\n"), ctx.mentions


def _blocks(nodes: list[SyntaxTreeNode], ctx: Inline, *, depth: int) -> Rendered:
    """Sibling blocks; a rule is a separator above the block after it (a rule with no block
    after it is a line of its own, so a message of one rule still shows it)."""
    out = Rendered([], [])
    rule = False
    for node in nodes:
        if node.type == "hr":
            rule = True
            continue
        block = _block(node, ctx, depth)
        if block.elements:
            _append(out, block, rule and bool(out.elements))
            rule = False
    if rule:
        _append(out, Rendered([TextBlock(text=_RULE, wrap=True)], [_RULE]), False)
    return out


def _append(out: Rendered, block: Rendered, separator: bool) -> None:
    if out.lines:
        out.lines.append("")
    if separator:
        block.elements[0].separator = True  # type: ignore[attr-defined]
        out.lines.append(_RULE)
    out.elements.extend(block.elements)
    out.lines.extend(block.lines)


def _block(node: SyntaxTreeNode, ctx: Inline, depth: int) -> Rendered:
    kind = node.type
    if kind in ("paragraph", "heading"):
        return _text(node, ctx)
    if kind in ("bullet_list", "ordered_list"):
        return _list(node, ctx, depth)
    if kind == "blockquote":
        inner = _blocks(node.children, ctx, depth=depth)
        quoted: list[CardElement] = []
        if inner.elements:
            quoted.append(Container(style="emphasis", items=inner.elements))
        return Rendered(quoted, [f"> {line}".rstrip() for line in inner.lines])
    if kind in ("fence", "code_block"):
        return _code(node.content.removesuffix("\n").split("\n"), ctx)
    if kind == "table":
        return _table(node, ctx)
    # Anything the dialect adds later still shows its text rather than vanishing.
    return _blocks(node.children, ctx, depth=depth)


def _text(node: SyntaxTreeNode, ctx: Inline) -> Rendered:
    inline = node.children[0]
    markdown = render_inline(inline, ctx)
    if not markdown.strip():
        return Rendered([], [])
    block = TextBlock(text=markdown, wrap=True)
    if node.type == "heading":
        block.weight = "Bolder"
        block.size = _HEADING_SIZES.get(node.tag, "Default")
    return Rendered([block], plain_inline(inline, ctx).split("\n"))


def _list(node: SyntaxTreeNode, ctx: Inline, depth: int) -> Rendered:
    ordered = node.type == "ordered_list"
    number = int(str(node.attrs.get("start", 1))) if ordered else 0
    out = Rendered([], [])
    items: list[str] = []
    for item in node.children:
        marker = f"{number}." if ordered else "-"
        checked = item.meta.get("checked")
        box = _TASK_BOXES[checked] if isinstance(checked, bool) else ""
        head, rest = _split_item(item)
        markdown = render_inline(head, ctx).replace(LINE_BREAK, " ") if head else ""
        items.append(f"{marker} {box}{markdown or _NBSP}")
        shown = plain_inline(head, ctx).replace("\n", " ") if head else ""
        plain_marker = marker if ordered else _PLAIN_BULLETS[depth % 3]
        out.lines.append(f"{'    ' * depth}{plain_marker} {box}{shown}".rstrip())
        if rest:
            _flush(items, out)
            nested = _blocks(rest, ctx, depth=depth + 1)
            if nested.elements:
                out.elements.append(_indented(nested.elements))
                out.lines.extend(
                    line if line.startswith("    " * (depth + 1)) else "    " * (depth + 1) + line
                    for line in nested.lines
                    if line
                )
        number += 1
    _flush(items, out)
    return out


def _split_item(item: SyntaxTreeNode) -> tuple[SyntaxTreeNode | None, list[SyntaxTreeNode]]:
    """An item's first paragraph (its line in the list) and the blocks after it."""
    children = list(item.children)
    if children and children[0].type == "paragraph":
        return children[0].children[0], children[1:]
    return None, children


def _flush(items: list[str], out: Rendered) -> None:
    if items:
        # `\r` between items, as Microsoft's examples write lists.
        out.elements.append(TextBlock(text="\r".join(items), wrap=True))
        items.clear()


def _indented(elements: list[CardElement]) -> ColumnSet:
    return ColumnSet(
        columns=[Column(width=_INDENT), Column(width="stretch", items=elements)], spacing="None"
    )


def _code(lines: list[str], ctx: Inline) -> Rendered:
    blocks: list[CardElement] = [
        TextBlock(text=_code_line(line, ctx), font_type="Monospace", wrap=True, spacing="None")
        for line in lines
    ]
    plain = [inert(line, allow_broadcast=ctx.allow_broadcast) for line in lines]
    return Rendered([Container(items=blocks)], plain)


def _code_line(line: str, ctx: Inline) -> str:
    """A line of code shown as typed: markup escaped, spaces kept. Renderers collapse runs
    of spaces, so leading ones are no-break spaces and inner runs alternate no-break and
    plain spaces (the width is kept and a long line can still wrap)."""
    stripped = line.lstrip(" ")
    lead = _NBSP * (len(line) - len(stripped))
    text = escape_line_starts(markdown_text(stripped, allow_broadcast=ctx.allow_broadcast))
    text = _SPACE_RUN.sub(
        lambda run: ((_NBSP + " ") * len(run.group(0)))[: len(run.group(0))], text
    )
    return (lead + text) or _NBSP


def _table(node: SyntaxTreeNode, ctx: Inline) -> Rendered:
    rows = [row for section in node.children for row in section.children]
    columns = max(len(row.children) for row in rows)
    aligns = [str(cell.attrs.get("style", "")) for cell in rows[0].children]
    definitions = [
        ColumnDefinition(width=1, horizontal_cell_content_alignment=_alignment(style))
        for style in aligns + [""] * (columns - len(aligns))
    ]
    table_rows, lines = [], []
    for row in rows:
        cells = [_cell(cell, ctx) for cell in row.children]
        cells += [TableCell(items=[]) for _ in range(columns - len(cells))]
        table_rows.append(TableRow(cells=cells))
        shown = [
            plain_inline(cell.children[0], ctx) if cell.children else "" for cell in row.children
        ]
        lines.append(" | ".join(shown).rstrip())
    table = Table(columns=definitions, rows=table_rows, first_row_as_headers=True)
    return Rendered([table], lines)


def _cell(cell: SyntaxTreeNode, ctx: Inline) -> TableCell:
    markdown = render_inline(cell.children[0], ctx) if cell.children else ""
    return TableCell(items=[TextBlock(text=markdown, wrap=True)] if markdown.strip() else [])


def _alignment(style: str) -> Any:
    return _ALIGN.get(style.removeprefix("text-align:"))
