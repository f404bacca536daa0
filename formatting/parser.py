"""The Markdown dialect we read: CommonMark plus GFM tables, strikethrough and task lists.

Raw HTML is off (a `<tag>` is text, escaped like any other), and Slack entities the author
wrote (`<@U…>`, `<#C…>`, `<!subteam^…>`, `<!date^…>`, `<url|text>`, broadcasts) become one
`slack_entity` token each, recognised before autolinks so `<https://x|docs>` stays a link.

One deliberate departure from CommonMark: a `**` run between punctuation and a letter may
also close (`**Status:**OK`) or open (`OK**(beta)**`) emphasis. CommonMark refuses both,
yet people write them all the time and mean bold. `_` keeps the strict rule so
`snake_case_names` stay text.
"""

from __future__ import annotations

from functools import cache

from markdown_it import MarkdownIt
from markdown_it.common.utils import isMdAsciiPunct, isPunctChar, isWhiteSpace
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline.state_inline import Delimiter
from markdown_it.tree import SyntaxTreeNode

from formatting.escape import match_entity
from formatting.teams_escape import match_mention


def _slack_entity(state: StateInline, silent: bool) -> bool:
    if state.src[state.pos] != "<":
        return False
    entity = match_entity(state.src, state.pos)
    if entity is None:
        return False
    if not silent:
        state.push("slack_entity", "", 0).content = entity
    state.pos += len(entity)
    return True


def _teams_mention(state: StateInline, silent: bool) -> bool:
    # `<@29:…>` and the other Teams user ids: one `teams_mention` token (teams=True only).
    if state.src[state.pos] != "<":
        return False
    found = match_mention(state.src, state.pos)
    if found is None:
        return False
    if not silent:
        state.push("teams_mention", "", 0).content = found.group(0)
    state.pos = found.end()
    return True


def _star_emphasis(state: StateInline, silent: bool) -> bool:
    # The built-in emphasis rule, plus the punctuation case (module doc); its delimiters are
    # paired by the built-in post-processing as usual.
    start = state.pos
    if silent or state.src[start] != "*":
        return False
    scanned = state.scanDelims(start, True)
    end = start + scanned.length
    before = state.src[start - 1] if start > 0 else " "
    after = state.src[end] if end < state.posMax else " "
    bold = scanned.length >= 2
    can_open = scanned.can_open or (bold and _is_punct(after) and _is_word(before))
    can_close = scanned.can_close or (bold and _is_punct(before) and _is_word(after))
    for _ in range(scanned.length):
        state.push("text", "", 0).content = "*"
        state.delimiters.append(
            Delimiter(
                marker=ord("*"),
                length=scanned.length,
                token=len(state.tokens) - 1,
                end=-1,
                open=can_open,
                close=can_close,
            )
        )
    state.pos = end
    return True


def _is_punct(char: str) -> bool:
    return isMdAsciiPunct(ord(char)) or isPunctChar(char)


def _is_word(char: str) -> bool:
    return not isWhiteSpace(ord(char)) and not _is_punct(char)


@cache
def _parser(teams: bool) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "tasklists": True})
    md.enable(["table", "strikethrough"])
    md.inline.ruler.before("autolink", "slack_entity", _slack_entity)
    if teams:
        md.inline.ruler.before("slack_entity", "teams_mention", _teams_mention)
    md.inline.ruler.before("emphasis", "star_emphasis", _star_emphasis)
    return md


def parse(source: str, *, teams: bool = False) -> SyntaxTreeNode:
    """The syntax tree; `teams` also reads Teams mentions (`<@29:…>`, formatting/teams_escape)."""
    return SyntaxTreeNode(_parser(teams).parse(source))
