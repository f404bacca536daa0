"""What user text may and may not become in a Teams card: the security boundary for Teams.

A TextBlock reads a small Markdown subset (Microsoft, "Format cards in Teams", and "Text
features" of Adaptive Cards, read 2026-12-03): `**bold**`, `_italic_`, `- ` and `1. ` lists
and `[text](url)` links. User text has the characters of that subset escaped with a
backslash (CommonMark's escape), `_` only where it could open or close emphasis, so
`snake_case` stays as typed.

The card renderer escapes `<`, `>` and `&` itself (HTML is not supported in Adaptive Cards),
but Teams reads `<at>…</at>` in a TextBlock as a mention, and Teams message text (the
fallback) renders HTML. So every `<` that could start a tag (`<at>`, `</at>`, `<b>`,
`<!--`) gets an invisible word joiner after it: shown the same, never a tag, never a
mention. A mention is only what `match_mention` finds and the renderer turns into an entity.

Teams cards cannot mention a team or a channel ("Channel and team mentions aren't supported
in bot messages", same page), and no word becomes one; still, `@team`, `@channel`, `@here`
and `@everyone` get the word joiner after `@`, as on Slack, unless the message allows
broadcasts, so a reader never sees a broadcast the author did not mean.
"""

from __future__ import annotations

import re

JOINER = "\u2060"

# `<` then what starts a tag, a closing tag, a comment or a declaration.
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
_BROADCAST_WORD = re.compile(r"(?<!\w)@(team|channel|here|everyone)\b", re.IGNORECASE)
_BARE_AT = re.compile(r"(?<!\w)@$")
# Always escaped: link brackets, code ticks and the escape itself.
_ALWAYS = re.compile(r"([\\\[\]`])")
# A run of `*` or `_` can open or close emphasis, unless spaces stand on both sides of it
# (`2 * 3`), or, for `_`, letters or digits do (`snake_case`, `my__init__func`): those
# stay as typed, without backslashes a client might show.
_EMPHASIS_RUN = re.compile(r"\*+|_+")
# What starts a list item at the start of a line: `-` or a number and a dot.
_LINE_START = re.compile(r"^(\s*)(?:(-)|(\d+)\.)(?=\s|$)", re.MULTILINE)

# A person the author (or `{member}` of a rotation) names: `<@ID>` or `<@ID|Name>`, where ID
# is a Teams user id: a Bot Framework id (`29:…`), an `8:orgid:` id or an Entra object id.
_MENTION = re.compile(
    r"<@(?P<id>29:[A-Za-z0-9_\-.]{1,200}"
    r"|8:orgid:[0-9a-fA-F-]{36}"
    r"|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"
    r"(?:\|(?P<name>[^<>\n|]{1,100}))?>"
)


def inert(text: str, *, allow_broadcast: bool) -> str:
    """Text with no tag and no broadcast word left in it (the plain-text fallback)."""
    text = _TAG_START.sub("<" + JOINER, text)
    return text if allow_broadcast else neutralise_broadcasts(text)


def neutralise_broadcasts(text: str) -> str:
    return _BROADCAST_WORD.sub(lambda m: "@" + JOINER + m.group(1), text)


def joined(head: str, tail: str, *, allow_broadcast: bool) -> str:
    """`head + tail` where each is already inert: what ends `head` never starts a tag or a
    broadcast word with what begins `tail` (`<` then a Slack date's text `at>`, `@` then
    `here`)."""
    if head.endswith("<") and _TAG_START.match("<" + tail[:1]):
        return head + JOINER + tail
    if not allow_broadcast and _BARE_AT.search(head) and _BROADCAST_WORD.match("@" + tail):
        return head + JOINER + tail
    return head + tail


def markdown_text(text: str, *, allow_broadcast: bool) -> str:
    """User text as a TextBlock must receive it: shown exactly as typed."""
    escaped = _EMPHASIS_RUN.sub(_escape_run, _ALWAYS.sub(r"\\\1", text))
    return inert(escaped, allow_broadcast=allow_broadcast)


def _escape_run(found: re.Match[str]) -> str:
    run = found.group(0)
    return run if _inert_run(found) else "".join("\\" + char for char in run)


def _inert_run(found: re.Match[str]) -> bool:
    text, start, end = found.string, found.start(), found.end()
    if start == 0 or end == len(text):
        return False  # what is outside this text is not known here
    before, after = text[start - 1], text[end]
    if before in " \t" and after in " \t":
        return True
    return found.group(0)[0] == "_" and before.isalnum() and after.isalnum()


def escape_line_starts(text: str) -> str:
    """`- ` or `1. ` at the start of a line of text would make it a list item."""
    return _LINE_START.sub(_escape_marker, text)


def _escape_marker(found: re.Match[str]) -> str:
    if found.group(2):
        return found.group(1) + "\\-"
    return found.group(1) + found.group(3) + "\\."


def mention_text(name: str) -> str:
    """A name as it may stand between `<at>` and `</at>`: no tag, no markup to read (the
    characters that could be are spaces), on one line."""
    name = re.sub(r"[<>*\[\]`~\\|\s]", " ", name)
    name = _EMPHASIS_RUN.sub(lambda run: run.group(0) if _inert_run(run) else " ", name)
    return neutralise_broadcasts(" ".join(name.split()))


def match_mention(source: str, pos: int) -> re.Match[str] | None:
    return _MENTION.match(source, pos)


def mention_name(found: re.Match[str]) -> str:
    """The name a mention shows: the one given, else the id."""
    name = (found.group("name") or "").strip()
    return name or found.group("id")
