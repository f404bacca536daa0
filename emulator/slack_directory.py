"""The workspace directory of the Slack stand-in: named channels and people, what
`conversations.list`, `users.list` and `users.lookupByEmail` answer from them, and a seeded
workspace with realistic names (`seed_workspace`) for tests and `make run`.

Sources (docs.slack.dev/reference/methods/conversations.list, users.list,
users.lookupByEmail; docs.slack.dev/apis/web-api/pagination):
- Both lists page by cursor: `limit` (default 100; at most 1000, Slack's "no larger than
  1000"; anything else that is not a whole number of at least 1: `invalid_limit`), `cursor`
  (an unknown one: `invalid_cursor`), and every page carries `response_metadata.next_cursor`,
  "" on the last page.
- conversations.list: `types`, a comma-separated mix of public_channel, private_channel, mpim
  and im (default public_channel; another word: `invalid_types`); `exclude_archived`. The
  stand-in models public and private channels only.
- users.list: every member, deleted (deactivated) ones and bots included, with `deleted` and
  `is_bot` set; the caller leaves them out.
- users.lookupByEmail: `email` -> the user, or `users_not_found` (what Slack answers an
  unknown address).
- All three are Tier 2 (20+ per minute) or Tier 3 (lookupByEmail: 50+): the stand-in's
  `set_rate_limit` models any of them (emulator/slack_rate_limits.py).

A channel's archived and member flags, and a person's deactivated and bot flags, are the
stand-in's channel and user states (`set_channel`, `set_user`): one truth for posting and
listing. A channel or a person set `exists=False` is not listed.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from emulator.slack_channels import ChannelState
from emulator.slack_limits import SlackError
from emulator.slack_users import UserState

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
CHANNEL_TYPES = frozenset({"public_channel", "private_channel", "mpim", "im"})


@dataclass(frozen=True)
class NamedChannel:
    id: str
    name: str
    is_private: bool = False


@dataclass(frozen=True)
class Person:
    id: str
    name: str  # the handle
    real_name: str
    email: str


# A small company's workspace: the ids keep Slack's shapes (core.models CHANNEL_ID, USER_ID).
SEED_CHANNELS: tuple[NamedChannel, ...] = (
    NamedChannel("C0GENERAL01", "general"),
    NamedChannel("C0RANDOM001", "random"),
    NamedChannel("C0ENGSTAND1", "eng-standup"),
    NamedChannel("C0RELEASES1", "releases"),
    NamedChannel("C0INCIDENT1", "incidents"),
    NamedChannel("C0DESIGN001", "design"),
    NamedChannel("C0SUPPORT01", "customer-support"),
    NamedChannel("C0SALES0001", "sales-wins"),
    NamedChannel("C0ONCALL001", "on-call"),
    NamedChannel("C0MARKETIN1", "marketing"),
    NamedChannel("C0LEADS0001", "team-leads", is_private=True),
    NamedChannel("C0HIRING001", "hiring", is_private=True),
)
SEED_PEOPLE: tuple[Person, ...] = (
    Person("U0ANAGARCIA", "ana", "Ana García", "ana.garcia@example.com"),
    Person("U0BENCARTER", "ben.carter", "Ben Carter", "ben.carter@example.com"),
    Person("U0CHLOEWONG", "chloe", "Chloe Wong", "chloe.wong@example.com"),
    Person("U0DAVIDOKAF", "david.okafor", "David Okafor", "david.okafor@example.com"),
    Person("U0EMMANOVAK", "emma", "Emma Novák", "emma.novak@example.com"),
    Person("U0FARIDKHAN", "farid", "Farid Khan", "farid.khan@example.com"),
    Person("U0GRETASVEN", "greta.s", "Greta Svensson", "greta.svensson@example.com"),
    Person("U0HIROTANAK", "hiro", "Hiro Tanaka", "hiro.tanaka@example.com"),
    Person("U0ISABELROS", "isabel", "Isabel Rossi", "isabel.rossi@example.com"),
    Person("U0JONASWEBE", "jonas.weber", "Jonas Weber", "jonas.weber@example.com"),
    Person("U0KEMIADEYE", "kemi", "Kemi Adeyemi", "kemi.adeyemi@example.com"),
    Person("U0LIAMMURPH", "liam", "Liam Murphy", "liam.murphy@example.com"),
    Person("U0MAYAPATEL", "maya.patel", "Maya Patel", "maya.patel@example.com"),
    Person("U0NOAHSCHMI", "noah", "Noah Schmidt", "noah.schmidt@example.com"),
    Person("U0OLIVIALEE", "olivia", "Olivia Lee", "olivia.lee@example.com"),
)

_Item = TypeVar("_Item")


def limit_param(raw: object) -> int:
    """A list's page size: `limit` (absent, empty or 0: the default)."""
    if raw is None or str(raw).strip() in ("", "0"):
        return DEFAULT_LIMIT
    try:
        limit = int(str(raw).strip())
    except ValueError:
        raise SlackError("invalid_limit") from None
    if not 1 <= limit <= MAX_LIMIT:
        raise SlackError("invalid_limit")
    return limit


def types_param(raw: object) -> frozenset[str]:
    """conversations.list's `types` (default public_channel)."""
    if raw is None or not str(raw).strip():
        return frozenset({"public_channel"})
    types = frozenset(word.strip() for word in str(raw).split(",") if word.strip())
    if not types or not types <= CHANNEL_TYPES:
        raise SlackError("invalid_types")
    return types


def page_of(items: Sequence[_Item], cursor: object, limit: int) -> tuple[list[_Item], str]:
    """The page of `items` from `cursor` (an opaque offset), and the next cursor ("" at the
    end). A cursor the stand-in did not give: `invalid_cursor`."""
    start = _offset(cursor)
    page = list(items[start : start + limit])
    end = start + len(page)
    return page, _cursor(end) if end < len(items) else ""


def channel_object(channel: NamedChannel, state: ChannelState) -> dict[str, Any]:
    """The fields of Slack's conversation object the product reads, and a few around them."""
    return {
        "id": channel.id,
        "name": channel.name,
        "name_normalized": channel.name,
        "is_channel": not channel.is_private,
        "is_group": channel.is_private,
        "is_im": False,
        "is_mpim": False,
        "is_private": channel.is_private,
        "is_archived": state.archived,
        "is_general": channel.name == "general",
        "is_member": state.member,
    }


def user_object(person: Person, state: UserState) -> dict[str, Any]:
    return {
        "id": person.id,
        "team_id": "T0001",
        "name": person.name,
        "real_name": person.real_name,
        "deleted": state.deactivated,
        "is_bot": state.bot,
        "profile": {
            "real_name": person.real_name,
            "display_name": person.name,
            "email": person.email,
        },
    }


def listed_channel(state: ChannelState, channel: NamedChannel, types: frozenset[str]) -> bool:
    kind = "private_channel" if channel.is_private else "public_channel"
    return state.exists and kind in types


def _cursor(offset: int) -> str:
    return base64.b64encode(f"offset:{offset}".encode()).decode()


def _offset(cursor: object) -> int:
    if cursor is None or str(cursor) == "":
        return 0
    try:
        text = base64.b64decode(str(cursor), validate=True).decode()
        prefix, _, number = text.partition(":")
        offset = int(number)
    except ValueError:
        raise SlackError("invalid_cursor") from None
    if prefix != "offset" or offset < 0:
        raise SlackError("invalid_cursor")
    return offset
