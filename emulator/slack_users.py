"""People in the Slack stand-in, and what `conversations.open` answers for them.

A user id never set is a known, active person (as a channel never set is a known channel);
`set_user` makes one unknown, deactivated, or a bot. Codes, from conversations.open's
reference (docs.slack.dev/reference/methods/conversations.open): `user_not_found` for an id
Slack does not know, `user_disabled` for a deactivated account, and `cannot_dm_bot` for a bot
user (our own bot, UBOT, included). Slack's answer is `{"ok": true, "channel": {"id": "D…"}}`,
the same DM id for the same person every time (with `no_op` and `already_open` once it is
open), so the stand-in derives the id from the user id: stable across calls, resets and
processes.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

_USER_ID = re.compile(r"\A[UW][A-Z0-9]{2,}\Z")
_ALPHABET = "0123456789ABCDEFGHJKLMNPQRSTUVWXYZ"


@dataclass(frozen=True)
class UserState:
    exists: bool = True
    deactivated: bool = False
    bot: bool = False

    def open_error(self) -> str | None:
        if not self.exists:
            return "user_not_found"
        if self.deactivated:
            return "user_disabled"
        return "cannot_dm_bot" if self.bot else None


def dm_id(user: str) -> str:
    """The DM channel id of the bot's conversation with `user`: `D` and ten characters."""
    number = int.from_bytes(hashlib.sha256(user.encode()).digest()[:8], "big")
    chars = []
    for _ in range(10):
        number, digit = divmod(number, len(_ALPHABET))
        chars.append(_ALPHABET[digit])
    return "D" + "".join(chars)


def users_param(raw: object) -> str | None:
    """The one user of a 1:1 `users` argument; None when it names none (Slack:
    `users_list_not_supplied`). More than one is an mpim, which the stand-in does not open."""
    if raw is None or str(raw).strip() == "":
        return None
    return str(raw).strip()


def is_user_id(user: str) -> bool:
    return bool(_USER_ID.match(user))
