"""What Slack refuses or trims in a message, as the Slack stand-in enforces it on
chat.postMessage and chat.update. Each rule names its source; where Slack documents no number,
the one used and where it comes from is said.

- More than 50 blocks: `invalid_blocks`. "You can include up to 50 blocks in each message"
  (docs.slack.dev/reference/block-kit/blocks).
- A block whose type is not one of Slack's message blocks, or a block that is not an object
  with a `type`: `invalid_blocks` (the block list on the same page; `MESSAGE_BLOCK_TYPES`).
- A section's `text` over 3,000 characters, a section field over 2,000, more than 10 fields, a
  header's text over 150: `invalid_blocks` (the section and header block reference pages).
- All `text` strings in the blocks together over 12,000 characters: `msg_blocks_too_long`.
  Slack documents no cumulative number for every block type. 12,000 is the documented
  cumulative limit of markdown blocks (docs.slack.dev/reference/block-kit/blocks/
  markdown-block), and Slack's engineer in slackapi/bolt-js#2509 gave the server's limit as
  "12,000 text characters with a buffer for block containers" (also slackapi/bolt-js#2867,
  where 11,341 summed characters were refused). The buffer is undocumented, so this counts
  text only and refuses above 12,000: stricter than Slack by at most the buffer, never
  kinder.
- Top-level `text` over 40,000 characters: stored cut to 40,000, and the answer carries
  `warning: "message_truncated"` and `response_metadata.warnings: ["message_truncated"]`
  (api.slack.com/changelog/2018-04-truncating-really-long-messages; chat.postMessage's
  `text` argument: "Provide no more than 40,000 characters or risk truncation"; the
  warning shape is the one Slack documents for warnings, e.g. conversations.join's
  `already_in_channel`).
- Metadata `event_type` that is not a string of 1 to 255 letters, digits and underscores:
  `invalid_metadata_format`. Slack documents event_type only as "an alphanumeric string,
  and human readable" (docs.slack.dev/messaging/message-metadata/designing-metadata-
  event-schema; @slack/types MessageMetadata), its examples are snake_case
  (`task_created`); no length is documented, so 255 (Slack's bound on block_id and
  action_id) is used.
"""

from __future__ import annotations

import re
from typing import Any

MAX_BLOCKS = 50
SECTION_TEXT_MAX = 3000
SECTION_FIELD_MAX = 2000
SECTION_FIELDS_MAX = 10
HEADER_TEXT_MAX = 150
BLOCKS_TEXT_MAX = 12_000
TEXT_MAX = 40_000
EVENT_TYPE = re.compile(r"[A-Za-z0-9_]{1,255}")
# Blocks available in messages (docs.slack.dev/reference/block-kit/blocks, "Surfaces").
MESSAGE_BLOCK_TYPES = frozenset(
    {
        "actions",
        "context",
        "context_actions",
        "divider",
        "file",
        "header",
        "image",
        "input",
        "markdown",
        "rich_text",
        "section",
        "table",
        "video",
    }
)
TRUNCATED = "message_truncated"


class SlackError(Exception):
    """An ok:false answer; `errors` are Slack's per-field explanations (invalid_blocks)."""

    def __init__(self, code: str, errors: tuple[str, ...] = ()) -> None:
        super().__init__(code, *errors)
        self.code = code
        self.errors = errors

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"ok": False, "error": self.code}
        if self.errors:
            body["errors"] = list(self.errors)
            body["response_metadata"] = {"messages": [f"[ERROR] {e}" for e in self.errors]}
        return body


def check_blocks(blocks: list[Any]) -> None:
    if len(blocks) > MAX_BLOCKS:
        raise SlackError("invalid_blocks", (f"no more than {MAX_BLOCKS} items allowed",))
    for index, block in enumerate(blocks):
        problem = _block_problem(block)
        if problem:
            raise SlackError("invalid_blocks", (f"{problem} [json-pointer:/blocks/{index}]",))
    if _text_length(blocks) > BLOCKS_TEXT_MAX:
        raise SlackError("msg_blocks_too_long")


def _block_problem(block: Any) -> str | None:
    kind = block.get("type") if isinstance(block, dict) else None
    if kind not in MESSAGE_BLOCK_TYPES:
        return f"unsupported block type {kind!r}"
    if kind == "section":
        fields = block.get("fields") or []
        if _text_of(block.get("text")) > SECTION_TEXT_MAX:
            return f"section text must be at most {SECTION_TEXT_MAX} characters"
        if len(fields) > SECTION_FIELDS_MAX:
            return f"a section takes at most {SECTION_FIELDS_MAX} fields"
        if any(_text_of(field) > SECTION_FIELD_MAX for field in fields):
            return f"a section field must be at most {SECTION_FIELD_MAX} characters"
    if kind == "header" and _text_of(block.get("text")) > HEADER_TEXT_MAX:
        return f"header text must be at most {HEADER_TEXT_MAX} characters"
    return None


def _text_of(obj: Any) -> int:
    text = obj.get("text") if isinstance(obj, dict) else None
    return len(text) if isinstance(text, str) else 0


def _text_length(value: Any) -> int:
    """Characters in every `text` string anywhere in the blocks."""
    if isinstance(value, list):
        return sum(_text_length(item) for item in value)
    if not isinstance(value, dict):
        return 0
    total = 0
    for key, item in value.items():
        total += len(item) if key == "text" and isinstance(item, str) else _text_length(item)
    return total


def check_event_type(event_type: str) -> None:
    if not EVENT_TYPE.fullmatch(event_type):
        raise SlackError("invalid_metadata_format")


def truncate_text(text: str | None) -> tuple[str | None, list[str]]:
    """The text Slack keeps, and the warnings it answers with."""
    if text is None or len(text) <= TEXT_MAX:
        return text, []
    return text[:TEXT_MAX], [TRUNCATED]
