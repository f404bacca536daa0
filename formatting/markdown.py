"""Markdown → Slack mrkdwn, by walking markdown-it-py's syntax tree block by block.

The result is a list of top-level blocks, each a list of `Line`s, so that Block Kit splitting
(formatting/blocks.py) can cut between blocks or lines and knows which lines sit inside a
code fence. Slack has no headings, tables or nested lists, so: a heading is a bold line, a
list is indented by depth with a bullet per depth, a table is an aligned code block, a rule
is a line of box-drawing characters, and every line of a blockquote starts with `>`.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, replace

from markdown_it.tree import SyntaxTreeNode

from formatting.escape import plain
from formatting.inline import plain_inline, render_inline
from formatting.parser import parse

FENCE = "```"
_BULLETS = ("•", "◦", "▪")
_INDENT = "    "
_RULE = "─" * 10
_TASK_BOXES = {True: "☑", False: "☐"}


@dataclass(frozen=True)
class Line:
    """One output line. `prefix` is what its containers put in front of it (`> `, list
    indentation); `code` marks a line inside a code fence, which a split must close and
    reopen with `prefix` + FENCE."""

    text: str
    prefix: str = ""
    code: bool = False


Block = list[Line]


def to_blocks(source: str, *, allow_broadcast: bool) -> list[Block]:
    tree = parse(source)
    blocks = [_block(child, _Context(allow_broadcast)) for child in tree.children]
    return [block for block in blocks if any(line.text.strip() for line in block)]


def join(blocks: list[Block]) -> str:
    return "\n\n".join("\n".join(line.text for line in block) for block in blocks)


@dataclass(frozen=True)
class _Context:
    allow_broadcast: bool
    list_depth: int = 0


def _block(node: SyntaxTreeNode, ctx: _Context) -> Block:
    kind = node.type
    if kind == "paragraph":
        return _text_lines(render_inline(node.children[0], allow_broadcast=ctx.allow_broadcast))
    if kind == "heading":
        text = render_inline(node.children[0], allow_broadcast=ctx.allow_broadcast, bold=True)
        return _text_lines(f"*{text}*") if text.strip() else []
    if kind in ("bullet_list", "ordered_list"):
        return _list(node, ctx)
    if kind == "blockquote":
        return _quote(node, ctx)
    if kind in ("fence", "code_block"):
        return _code(node.content.removesuffix("\n").split("\n"), ctx)
    if kind == "table":
        return _table(node, ctx)
    if kind == "hr":
        return [Line(_RULE)]
    # Anything the dialect adds later still shows its text rather than vanishing.
    return [line for child in node.children for line in _block(child, ctx)]


def _text_lines(text: str) -> Block:
    return [Line(line) for line in text.split("\n")]


def _children(node: SyntaxTreeNode, ctx: _Context, *, gap: bool) -> Block:
    """The blocks inside a container; `gap` keeps a blank line between them."""
    lines: Block = []
    for child in node.children:
        rendered = _block(child, ctx)
        if not rendered:
            continue
        if lines and gap:
            lines.append(Line(""))
        lines.extend(rendered)
    return lines


def _nest(lines: Block, first: str, rest: str) -> Block:
    """Put `first` before the first line and `rest` before every other line."""
    nested: Block = []
    for index, line in enumerate(lines):
        lead = first if index == 0 else rest
        text = (lead + line.text).rstrip() if not line.code else lead + line.text
        nested.append(Line(text, rest + line.prefix, line.code))
    return nested


def _list(node: SyntaxTreeNode, ctx: _Context) -> Block:
    inner = replace(ctx, list_depth=ctx.list_depth + 1)
    number = int(str(node.attrs.get("start", 1))) if node.type == "ordered_list" else 0
    lines: Block = []
    for item in node.children:
        marker = f"{number}." if node.type == "ordered_list" else _BULLETS[ctx.list_depth % 3]
        checked = item.meta.get("checked")
        if isinstance(checked, bool):
            box = _TASK_BOXES[checked]
            marker = box if node.type == "bullet_list" else f"{marker} {box}"
        body = _item_body(item, inner)
        lines.extend(_nest(body or [Line("")], marker + " ", _INDENT))
        number += 1
    return lines


def _item_body(item: SyntaxTreeNode, ctx: _Context) -> Block:
    lines: Block = []
    previous = ""
    for child in item.children:
        rendered = _block(child, ctx)
        if not rendered:
            continue
        if previous == "paragraph" and child.type == "paragraph":
            lines.append(Line(""))
        lines.extend(rendered)
        previous = child.type
    return lines


def _quote(node: SyntaxTreeNode, ctx: _Context) -> Block:
    return _nest(_children(node, ctx, gap=True), "> ", "> ") or [Line(">")]


def _code(content: list[str], ctx: _Context) -> Block:
    body = [Line(plain(line, allow_broadcast=ctx.allow_broadcast), code=True) for line in content]
    return [Line(FENCE), *body, Line(FENCE)]


def _table(node: SyntaxTreeNode, ctx: _Context) -> Block:
    rows: list[list[str]] = []
    aligns: list[str] = []
    for section in node.children:
        for row in section.children:
            rows.append([_cell_text(cell) for cell in row.children])
            if not aligns:
                aligns = [str(cell.attrs.get("style", "")) for cell in row.children]
    columns = max(len(row) for row in rows)
    rows = [row + [""] * (columns - len(row)) for row in rows]
    aligns += [""] * (columns - len(aligns))
    widths = [max(_width(row[col]) for row in rows) for col in range(columns)]
    lines = [
        " | ".join(_pad(text, widths[col], aligns[col]) for col, text in enumerate(row)).rstrip()
        for row in rows
    ]
    lines.insert(1, "-+-".join("-" * width for width in widths))
    return _code(lines, ctx)


def _cell_text(cell: SyntaxTreeNode) -> str:
    return plain_inline(cell.children[0]) if cell.children else ""


def _width(text: str) -> int:
    # Wide (CJK, emoji) characters take two columns in Slack's monospace font.
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def _pad(text: str, width: int, style: str) -> str:
    missing = width - _width(text)
    if style.endswith("right"):
        return " " * missing + text
    if style.endswith("center"):
        return " " * (missing // 2) + text + " " * (missing - missing // 2)
    return text + " " * missing
