"""Slack's `rich_text` (what a `rich_text_input` answers) as this product's Markdown, the
text a message stores (formatting/ renders it back for Slack or Teams).

Styles: bold `**…**`, italic `*…*`, strike `~~…~~`, code `` `…` ``; links `[text](url)` (a
bare link `<url>`); people, channels and user groups as Slack's own `<@U…>`, `<#C…>`,
`<!subteam^S…>`; `@here`/`@channel`/`@everyone` as `<!here>` … (the broadcast policy
decides whether they notify); emoji `:name:`; bullet and numbered lists (nested by
`indent`), code blocks (fenced) and quotes (`> `). Plain text has the characters Markdown
would read as syntax escaped, so what the person typed is what is posted."""

from __future__ import annotations

import re
from typing import Any

# Markdown syntax anywhere on a line, and at a line's start only.
_SPECIAL = re.compile(r"([\\`*_~\[\]<>|#])")
_LINE_START = re.compile(r"(?m)^(\s*)([-+]|\d+[.)])(?=\s|$)")
_MARKERS = (("code", "`"), ("strike", "~~"), ("italic", "*"), ("bold", "**"))


def to_markdown(rich_text: dict[str, Any]) -> str:
    """The Markdown of a `rich_text` object; "" for anything else."""
    if not isinstance(rich_text, dict) or rich_text.get("type") != "rich_text":
        return ""
    blocks = [_block(element) for element in _list(rich_text.get("elements"))]
    return "\n\n".join(block for block in blocks if block.strip()).strip()


def plain_markdown(text: str) -> str:
    """`text` typed as is: Markdown's syntax characters escaped."""
    return _LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), _SPECIAL.sub(r"\\\1", text))


def _block(element: Any) -> str:
    kind = element.get("type") if isinstance(element, dict) else None
    if kind == "rich_text_section":
        return _inline(element.get("elements"))
    if kind == "rich_text_list":
        return _items(element)
    if kind == "rich_text_preformatted":
        body = "".join(_raw(child) for child in _list(element.get("elements")))
        return f"```\n{body.strip(chr(10))}\n```"
    if kind == "rich_text_quote":
        return "\n".join(f"> {line}" for line in _inline(element.get("elements")).split("\n"))
    return ""


def _items(element: dict[str, Any]) -> str:
    indent, offset = _number(element.get("indent")), _number(element.get("offset"))
    ordered = element.get("style") == "ordered"
    lines = []
    for number, item in enumerate(_list(element.get("elements")), start=offset + 1):
        bullet = f"{number}." if ordered else "-"
        text = _inline(item.get("elements") if isinstance(item, dict) else None)
        lines.append("    " * indent + f"{bullet} {text}")
    return "\n".join(lines)


def _inline(elements: Any) -> str:
    return "".join(_piece(element) for element in _list(elements))


def _piece(element: Any) -> str:
    if not isinstance(element, dict):
        return ""
    kind = element.get("type")
    given = element.get("style")
    style: dict[str, Any] = given if isinstance(given, dict) else {}
    if kind == "text":
        text = str(element.get("text") or "")
        return _styled(text if style.get("code") else plain_markdown(text), style)
    if kind == "link":
        url = str(element.get("url") or "")
        label = element.get("text")
        if not label:
            return f"<{url}>"
        return _styled(f"[{plain_markdown(str(label))}]({url.replace(')', '%29')})", style)
    return _mention(kind, element)


def _mention(kind: Any, element: dict[str, Any]) -> str:
    if kind == "user":
        return f"<@{element.get('user_id', '')}>"
    if kind == "channel":
        return f"<#{element.get('channel_id', '')}>"
    if kind == "usergroup":
        return f"<!subteam^{element.get('usergroup_id', '')}>"
    if kind == "broadcast":
        return f"<!{element.get('range', '')}>"
    if kind == "emoji":
        return f":{element.get('name', '')}:"
    return ""


def _styled(text: str, style: dict[str, Any]) -> str:
    """`text` inside its style's markers, innermost code; the spaces at either end stay
    outside them (`** a**` is not bold in Markdown)."""
    core = text.strip()
    if not core:
        return text
    lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]
    for name, marker in _MARKERS:
        if style.get(name):
            core = f"{marker}{core}{marker}"
    return f"{lead}{core}{trail}"


def _raw(element: Any) -> str:
    if isinstance(element, dict) and element.get("type") == "text":
        return str(element.get("text") or "")
    if isinstance(element, dict) and element.get("type") == "link":
        return str(element.get("url") or "")
    return _piece(element)


def _number(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
