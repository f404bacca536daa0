"""One paragraph's inline tokens → TextBlock Markdown, and → plain text for the fallback.

Bold is `**…**` and italic `*…*` (CommonMark's, read intraword too, unlike `_`); `~~strike~~`
and `` `code` `` are not in Teams' subset and keep their markers, which a reader still
understands. A line break is `\\n\\n`, the only newline a TextBlock shows outside a list
(Microsoft, "Format cards in Teams", read 2026-12-03). Links keep web and mail addresses
only. Slack entities an author wrote show as what they mean (`#ops`, `@oncall`, a date's
fallback text, a link); a Teams mention (`<@29:…>`) becomes `<at>Name</at>` and an entity.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from markdown_it.tree import SyntaxTreeNode

from formatting.escape import safe_url
from formatting.teams_escape import (
    escape_line_starts,
    inert,
    joined,
    markdown_text,
    match_mention,
    mention_name,
    mention_text,
)

_MARKERS = {"strong": "**", "em": "*", "s": "~~"}
LINE_BREAK = "\n\n"
# Punctuation that may move outside emphasis markers (never an escape or a marker).
_TRAILING = re.compile(r"[.,:;!?)\"']+$")
_LEADING = re.compile(r"^[(\"']+")


@dataclass
class Mentions:
    """The `msteams.entities` a card's text needs: one per distinct `<at>Name</at>`."""

    entities: list[dict[str, Any]] = field(default_factory=list)

    def at(self, user_id: str, name: str) -> str:
        """`<at>name</at>`, with its entity added once. Teams pairs a tag with the entity of
        the same text, so two people shown by one name are told apart by their ids."""
        shown = mention_text(name) or mention_text(user_id) or "?"
        taken = {e["text"] for e in self.entities if e["mentioned"]["id"] != user_id}
        if f"<at>{shown}</at>" in taken:
            shown = f"{shown} ({mention_text(user_id)})"
        text = f"<at>{shown}</at>"
        entity = {"type": "mention", "text": text, "mentioned": {"id": user_id, "name": shown}}
        if entity not in self.entities:
            self.entities.append(entity)
        return text


@dataclass
class Inline:
    allow_broadcast: bool
    mentions: Mentions


def render_inline(node: SyntaxTreeNode, ctx: Inline) -> str:
    """The TextBlock Markdown of an `inline` node. Each piece is inert; where two meet, a tag
    or a broadcast word could still form (`<` then `at>`, `@` then `here`): joins are
    guarded (formatting.teams_escape.joined)."""
    return escape_line_starts(_join(node.children, ctx))


def plain_inline(node: SyntaxTreeNode, ctx: Inline) -> str:
    """The visible text of an `inline` node, without markup or tags (the fallback)."""
    shown = "".join(_plain(child, ctx) for child in node.children)
    return inert(shown, allow_broadcast=ctx.allow_broadcast)


def _markdown(node: SyntaxTreeNode, ctx: Inline) -> str:
    kind = node.type
    if kind == "text":
        return markdown_text(node.content, allow_broadcast=ctx.allow_broadcast)
    if kind in ("softbreak", "hardbreak"):
        return LINE_BREAK
    if kind == "code_inline":
        return "`" + inert(node.content, allow_broadcast=ctx.allow_broadcast) + "`"
    if kind == "teams_mention":
        return _mention(node.content, ctx)
    if kind == "slack_entity":
        return _slack_entity(node.content, ctx, markdown=True)
    if kind in _MARKERS:
        inner = _join(node.children, ctx)
        return _MARKERS[kind] + inner + _MARKERS[kind] if inner.strip() else inner
    if kind in ("link", "image"):
        return _link(_target(node), plain_inline(node, ctx), ctx)
    return _join(node.children, ctx)


def _join(nodes: list[SyntaxTreeNode], ctx: Inline) -> str:
    pieces = [_markdown(node, ctx) for node in nodes]
    for index, node in enumerate(nodes):
        marker = _MARKERS.get(node.type)
        if marker and pieces[index].startswith(marker):
            before = pieces[index - 1][-1:] if index else ""
            after = pieces[index + 1][:1] if index + 1 < len(pieces) else ""
            pieces[index] = _flanking(pieces[index], marker, before, after)
    join = functools.partial(joined, allow_broadcast=ctx.allow_broadcast)
    return functools.reduce(join, pieces, "")


def _flanking(run: str, marker: str, before: str, after: str) -> str:
    """`run` (`**…**`) as CommonMark reads it next to a letter: our parser takes
    `**Status:**OK` and `OK**(beta)**` as bold, CommonMark does not, so punctuation at the
    edge next to a word moves outside the markers (`**Status**:OK`, `OK(**beta**)`)."""
    inner = run[len(marker) : -len(marker)]
    head = tail = ""
    if before.isalnum() and (found := _LEADING.match(inner)) and found.end() < len(inner):
        head, inner = found.group(0), inner[found.end() :]
    moved = after.isalnum() or bool(head)  # `(beta)` moves out whole: `OK(**beta**)`
    if moved and (found := _TRAILING.search(inner)) and found.start() > 0:
        tail, inner = found.group(0), inner[: found.start()]
    return head + marker + inner + marker + tail


def _target(node: SyntaxTreeNode) -> str:
    return str(node.attrs.get("href" if node.type == "link" else "src", ""))


def _plain(node: SyntaxTreeNode, ctx: Inline) -> str:
    kind = node.type
    if kind in ("text", "code_inline"):
        return inert(node.content, allow_broadcast=ctx.allow_broadcast)
    if kind in ("softbreak", "hardbreak"):
        return "\n"
    if kind == "teams_mention":
        found = match_mention(node.content, 0)
        return "@" + (mention_text(mention_name(found)) or found.group("id")) if found else ""
    if kind == "slack_entity":
        return _slack_entity(node.content, ctx, markdown=False)
    shown = "".join(_plain(child, ctx) for child in node.children)
    if kind in ("link", "image") and not shown:
        return inert(_target(node).removeprefix("mailto:"), allow_broadcast=ctx.allow_broadcast)
    return shown


def _mention(entity: str, ctx: Inline) -> str:
    found = match_mention(entity, 0)
    if found is None:  # the parser only makes the token for a match
        return markdown_text(entity, allow_broadcast=ctx.allow_broadcast)
    return ctx.mentions.at(found.group("id"), mention_name(found))


def _link(target: str, label: str, ctx: Inline) -> str:
    url = safe_url(target)
    label = label or target.removeprefix("mailto:")
    if url is None:
        # A relative or unsupported target means nothing in Teams: keep what readers see.
        return markdown_text(label, allow_broadcast=ctx.allow_broadcast)
    # safe_url escaped `&<>` for Slack; a Markdown link target wants them percent-encoded.
    href = (
        url.replace("&amp;", "&")
        .replace("&lt;", "%3C")
        .replace("&gt;", "%3E")
        .replace("(", "%28")
        .replace(")", "%29")
    )
    return f"[{markdown_text(label, allow_broadcast=ctx.allow_broadcast)}]({href})"


def _slack_entity(entity: str, ctx: Inline, *, markdown: bool) -> str:
    """What a Slack entity the author wrote means, shown in Teams: never a mention."""
    body, _, label = entity[1:-1].partition("|")
    if body.startswith(("http://", "https://", "mailto:")):
        if markdown:
            return _link(body, label, ctx)
        text = label or body.removeprefix("mailto:")
    elif body.startswith("#"):
        text = "#" + (label or body[1:])
    elif body.startswith("@"):
        text = "@" + (label or body[1:])
    elif body.startswith("!subteam^"):
        text = label if label.startswith("@") else "@" + (label or body.removeprefix("!subteam^"))
    elif body.startswith("!date^"):
        text = label or body.split("^")[2]
    else:  # a broadcast: <!here>, <!channel>, <!everyone>
        text = "@" + body[1:]
    if markdown:
        return markdown_text(text, allow_broadcast=ctx.allow_broadcast)
    return inert(text, allow_broadcast=ctx.allow_broadcast)
