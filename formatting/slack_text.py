"""Turn a message's source text into what Slack is sent, safely.

This is the security boundary for user text: `&`, `<` and `>` are escaped except inside the
Slack entities an author writes on purpose (user, channel and user-group mentions, dates,
links), and broadcasts (`<!channel>`, `<!here>`, `<!everyone>` and their `@` spellings) are
neutralised unless the message explicitly allows them. The full Markdown conversion is the
formatting issue's work; this module is where it lands, so the processor and the preview
share one function.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_ENTITY = re.compile(r"<[^<>\n]*>")
_KEPT_ENTITY = re.compile(
    r"^<(?:@[UW][A-Z0-9]+(?:\|[^<>]*)?"
    r"|#C[A-Z0-9]+(?:\|[^<>]*)?"
    r"|!subteam\^[A-Z0-9]+(?:\|[^<>]*)?"
    r"|!date\^\d+\^[^<>]*"
    r"|(?:https?://|mailto:)[^\s<>|]+(?:\|[^<>]*)?)>$"
)
_BROADCAST_ENTITY = re.compile(r"^<!(channel|here|everyone)(?:\|[^<>]*)?>$")
_BROADCAST_WORD = re.compile(r"@(channel|here|everyone)\b", re.IGNORECASE)
# A word joiner keeps "@here" readable while Slack no longer sees the keyword.
_JOINER = "\u2060"


@dataclass(frozen=True)
class SlackMessage:
    text: str
    blocks: list[dict[str, Any]] | None = None


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _neutralise_words(text: str) -> str:
    return _BROADCAST_WORD.sub(lambda m: "@" + _JOINER + m.group(1), text)


def to_slack(source: str, *, allow_broadcast: bool = False) -> SlackMessage:
    out: list[str] = []
    pos = 0
    for match in _ENTITY.finditer(source):
        plain = source[pos : match.start()]
        out.append(escape(plain if allow_broadcast else _neutralise_words(plain)))
        entity = match.group(0)
        broadcast = _BROADCAST_ENTITY.match(entity)
        if broadcast:
            out.append(entity if allow_broadcast else "@" + _JOINER + broadcast.group(1))
        elif _KEPT_ENTITY.match(entity):
            out.append(entity)
        else:
            out.append(escape(entity))
        pos = match.end()
    tail = source[pos:]
    out.append(escape(tail if allow_broadcast else _neutralise_words(tail)))
    return SlackMessage(text="".join(out))
