"""Slack's escaping rules and the entities an author may write on purpose.

Slack reads `&`, `<` and `>` as control characters, so every character of user text is
escaped except the entities this module recognises: user, channel and user-group mentions,
dates, and `<url|text>` links with a web or mail address. Broadcasts (`<!channel>`,
`<!here>`, `<!everyone>`, and the `@channel` spellings Slack can also turn into one) are a
workspace-wide notification, so they are neutralised unless the message allows them.
"""

from __future__ import annotations

import re

# A longer "entity" is treated as text: it keeps every entity small enough that splitting
# long content into blocks never has to cut through one.
MAX_ENTITY_LENGTH = 2000

_KEPT_ENTITY = re.compile(
    r"<(?:@[UW][A-Z0-9]+(?:\|[^<>\n]*)?"
    r"|#C[A-Z0-9]+(?:\|[^<>\n]*)?"
    r"|!subteam\^[A-Z0-9]+(?:\|[^<>\n]*)?"
    r"|!date\^\d+\^[^<>\n]*"
    r"|(?:https?://|mailto:)[^\s<>|]+(?:\|[^<>\n]*)?)>"
)
_BROADCAST_ENTITY = re.compile(r"<!(channel|here|everyone)(?:\|[^<>\n]*)?>")
# Not after a word character: `ops@channel.test` is an address, not a broadcast.
_BROADCAST_WORD = re.compile(r"(?<!\w)@(channel|here|everyone)\b", re.IGNORECASE)
# A word joiner keeps "@here" readable while Slack no longer sees the keyword.
_JOINER = "\u2060"


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def neutralise_broadcast_words(text: str) -> str:
    return _BROADCAST_WORD.sub(lambda m: "@" + _JOINER + m.group(1), text)


def plain(text: str, *, allow_broadcast: bool) -> str:
    """User text as Slack must receive it: escaped, and no broadcast unless allowed."""
    return escape(text if allow_broadcast else neutralise_broadcast_words(text))


def match_entity(source: str, pos: int) -> str | None:
    """The Slack entity (kept or broadcast) that starts at `pos`, if one does."""
    for pattern in (_KEPT_ENTITY, _BROADCAST_ENTITY):
        found = pattern.match(source, pos)
        if found and len(found.group(0)) <= MAX_ENTITY_LENGTH:
            return found.group(0)
    return None


def render_entity(entity: str, *, allow_broadcast: bool) -> str:
    """What Slack is sent for an entity `match_entity` found."""
    broadcast = _BROADCAST_ENTITY.fullmatch(entity)
    if broadcast and not allow_broadcast:
        return "@" + _JOINER + broadcast.group(1)
    return entity


def safe_url(url: str) -> str | None:
    """A link target Slack can carry inside `<url|text>`, or None for anything else.

    Only web and mail addresses become links; relative paths have no meaning in Slack.
    """
    if not re.match(r"(?:https?://|mailto:)[^\s<>|]+$", url, re.IGNORECASE):
        return None
    return escape(url)
