"""Rendered lines → Block Kit section blocks of at most 3,000 characters, when the whole
message fits in the blocks Slack takes: at most 50, and at most 12,000 characters of text
across them (beyond that Slack answers msg_blocks_too_long; emulator/slack_limits.py gives
the source of the number).

Content is cut between top-level blocks when it can, else between lines, and only a line
longer than a whole section is cut inside, at a space where there is one and never inside an
entity or an `&amp;` escape. A cut between two lines of a code fence closes the fence at the
end of one section and reopens it at the start of the next, so both render as code.
"""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import MarkdownTextObject, SectionBlock

from formatting.markdown import FENCE, Block, Line

SECTION_LIMIT = 3000
MAX_BLOCKS = 50
BLOCKS_TEXT_LIMIT = 12_000
# Room kept in a section for the fence that closes it when a cut falls inside code.
_FENCE_ROOM = 40


def section_blocks(blocks: list[Block]) -> list[dict[str, Any]] | None:
    """The message as section blocks, or None when Slack would refuse them as too many or
    too long: the message then goes as its text alone."""
    texts = section_texts(blocks)
    if len(texts) > MAX_BLOCKS or sum(len(text) for text in texts) > BLOCKS_TEXT_LIMIT:
        return None
    # to_dict() runs slack_sdk's validation: a section Slack would refuse fails here.
    return [SectionBlock(text=MarkdownTextObject(text=text)).to_dict() for text in texts]


def section_texts(blocks: list[Block], limit: int = SECTION_LIMIT) -> list[str]:
    pieces = [piece for block in blocks for piece in _fit(block, limit)]
    sections: list[str] = []
    for piece in pieces:
        if sections and len(sections[-1]) + 2 + len(piece) <= limit:
            sections[-1] += "\n\n" + piece
        else:
            sections.append(piece)
    return sections


def _fit(block: Block, limit: int) -> list[str]:
    """One block as texts of at most `limit` characters, cut between lines."""
    text = "\n".join(line.text for line in block)
    if len(text) <= limit:
        return [text]
    lines = [short for line in block for short in _short_lines(line, limit - _FENCE_ROOM)]
    pieces: list[str] = []
    current: list[Line] = []
    for line in lines:
        closing = len(line.prefix) + len(FENCE) + 1 if line.code else 0
        if current and _size(current) + 1 + len(line.text) + closing > limit:
            pieces.append(_close(current))
            current = _reopen(current[-1], line)
        current.append(line)
    pieces.append("\n".join(kept.text for kept in current))
    return pieces


def _size(lines: list[Line]) -> int:
    return sum(len(line.text) for line in lines) + len(lines) - 1


def _close(lines: list[Line]) -> str:
    last = lines[-1]
    closing = [last.prefix + FENCE] if last.code else []
    return "\n".join([line.text for line in lines] + closing)


def _reopen(last: Line, following: Line) -> list[Line]:
    if last.code and following.code:
        return [Line(following.prefix + FENCE, following.prefix)]
    return []


def _short_lines(line: Line, limit: int) -> list[Line]:
    """A line longer than `limit` as several, each continuing after the line's prefix."""
    if len(line.text) <= limit:
        return [line]
    lines: list[Line] = []
    text = line.text
    while len(text) > limit:
        cut = cut_point(text, limit, start=len(line.prefix) + 1)
        lines.append(Line(text[:cut].rstrip(), line.prefix, line.code))
        text = line.prefix + text[cut:].lstrip(" ")
    lines.append(Line(text, line.prefix, line.code))
    return lines


def cut_point(text: str, limit: int, *, start: int = 0) -> int:
    """Where to cut `text` so the head is at most `limit` long: after a space if possible."""
    window = text[:limit]
    cut = window.rfind(" ", start) + 1 or limit
    head = text[:cut]
    # Never cut through `<...>` or `&amp;`: both would reach Slack broken.
    opened = head.rfind("<")
    if opened > head.rfind(">") and opened > start:
        cut, head = opened, text[:opened]
    ampersand = head.rfind("&", len(head) - 4)
    if ampersand > start and ";" not in head[ampersand:]:
        cut = ampersand
    return cut
