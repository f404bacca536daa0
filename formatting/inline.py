"""One paragraph's inline tokens → Slack mrkdwn.

Slack only reads `*bold*`, `_italic_`, `~strike~` and `` `code` `` when the character
outside the marker is a space or punctuation: `*Status:*OK` stays literal. Where a marker
touches a letter, digit or another closing marker, a zero-width space goes between them, so
what Markdown emphasises intraword Slack emphasises too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from markdown_it.tree import SyntaxTreeNode

from formatting.escape import plain, render_entity, safe_url

_MARKERS = {"strong": "*", "em": "_", "s": "~"}
_GUARD = "\u200b"
# Characters next to which Slack still reads a marker; anything else gets a guard.
_OPEN_SAFE = " \t\n([{\"'"
_CLOSE_SAFE = " \t\n)]}.,;:!?\"'"


@dataclass(frozen=True)
class _Text:
    """User text, escaped when the paragraph is assembled."""

    value: str


@dataclass(frozen=True)
class _Raw:
    """Output that is already Slack mrkdwn (links, entities, code)."""

    value: str


@dataclass(frozen=True)
class _Marker:
    char: str
    opening: bool


_Piece = _Text | _Raw | _Marker


@dataclass
class _Walk:
    allow_broadcast: bool
    pieces: list[_Piece] = field(default_factory=list)
    open_markers: list[str] = field(default_factory=list)


def render_inline(node: SyntaxTreeNode, *, allow_broadcast: bool, bold: bool = False) -> str:
    """The mrkdwn for an `inline` node; `bold` renders it inside a bold line (headings)."""
    walk = _Walk(allow_broadcast, open_markers=["*"] if bold else [])
    for child in node.children:
        _render(child, walk)
    return _assemble(walk.pieces, allow_broadcast=allow_broadcast)


def plain_inline(node: SyntaxTreeNode) -> str:
    """The visible text of inline content without any markup (link labels, table cells)."""
    parts: list[str] = []
    for child in node.children:
        if child.type in ("text", "code_inline", "slack_entity"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        else:
            parts.append(plain_inline(child))
    return "".join(parts)


def _render(node: SyntaxTreeNode, walk: _Walk) -> None:
    kind = node.type
    if kind == "text":
        walk.pieces.append(_Text(node.content))
    elif kind in ("softbreak", "hardbreak"):
        walk.pieces.append(_Raw("\n"))
    elif kind == "code_inline":
        walk.pieces.append(_Marker("`", True))
        walk.pieces.append(_Raw(plain(node.content, allow_broadcast=walk.allow_broadcast)))
        walk.pieces.append(_Marker("`", False))
    elif kind == "slack_entity":
        walk.pieces.append(_Raw(render_entity(node.content, allow_broadcast=walk.allow_broadcast)))
    elif kind in _MARKERS:
        _render_emphasis(node, _MARKERS[kind], walk)
    elif kind == "link":
        _render_link(str(node.attrs.get("href", "")), plain_inline(node), walk)
    elif kind == "image":
        _render_link(str(node.attrs.get("src", "")), plain_inline(node), walk)
    else:
        for child in node.children:
            _render(child, walk)


def _render_emphasis(node: SyntaxTreeNode, char: str, walk: _Walk) -> None:
    # `***a***` nests the same Slack marker twice; the inner pair would only print stars.
    nested = char in walk.open_markers
    if not nested:
        walk.pieces.append(_Marker(char, True))
        walk.open_markers.append(char)
    for child in node.children:
        _render(child, walk)
    if not nested:
        walk.open_markers.pop()
        walk.pieces.append(_Marker(char, False))


def _render_link(target: str, label: str, walk: _Walk) -> None:
    url = safe_url(target)
    if url is None:
        # A relative or unsupported target means nothing in Slack: keep what readers see.
        walk.pieces.append(_Text(label or target))
        return
    shown = label.removeprefix("mailto:")
    if not label or shown == target.removeprefix("mailto:"):
        walk.pieces.append(_Raw(f"<{url}>"))
    else:
        walk.pieces.append(_Raw(f"<{url}|{plain(label, allow_broadcast=walk.allow_broadcast)}>"))


def _assemble(pieces: list[_Piece], *, allow_broadcast: bool) -> str:
    strings = _escape_text_runs(pieces, allow_broadcast=allow_broadcast)
    out: list[str] = []
    for index, piece in enumerate(strings):
        if isinstance(piece, str):
            out.append(piece)
            continue
        if piece.opening:
            before = _neighbour(strings, index, step=-1)
            if _needs_guard(before, _OPEN_SAFE):
                out.append(_GUARD)
            out.append(piece.char)
        else:
            out.append(piece.char)
            after = _neighbour(strings, index, step=1)
            if _needs_guard(after, _CLOSE_SAFE):
                out.append(_GUARD)
    return "".join(out)


def _escape_text_runs(pieces: list[_Piece], *, allow_broadcast: bool) -> list[str | _Marker]:
    # Adjacent text pieces are escaped as one run, so "@" and "here" split by the parser
    # are still seen as the broadcast word.
    out: list[str | _Marker] = []
    run: list[str] = []
    for piece in pieces:
        if isinstance(piece, _Text):
            run.append(piece.value)
            continue
        if run:
            out.append(plain("".join(run), allow_broadcast=allow_broadcast))
            run = []
        out.append(piece.value if isinstance(piece, _Raw) else piece)
    if run:
        out.append(plain("".join(run), allow_broadcast=allow_broadcast))
    return out


def _neighbour(strings: list[str | _Marker], index: int, *, step: int) -> str | _Marker:
    """The character (or marker) just outside the marker at `index`; "" at either end."""
    position = index + step
    while 0 <= position < len(strings):
        item = strings[position]
        if isinstance(item, _Marker):
            return item
        if item:
            return item[-1] if step < 0 else item[0]
        position += step
    return ""


def _needs_guard(neighbour: str | _Marker, safe: str) -> bool:
    if isinstance(neighbour, _Marker):
        # Nested markers (`*_a_*`) read fine; a closing one right before an opening one
        # (`*a*~b~`) does not, and is guarded once, on the closing side.
        return safe == _CLOSE_SAFE and neighbour.opening
    return neighbour != "" and neighbour not in safe
