"""The directory cache (core.directory): what Slack's `conversations.list` and `users.list`
said, one document per channel (`directory_channels/{channel id}`) and per person
(`directory_users/{user id}`), and one refresh-state document per list
(`directory_refresh/channels`, `directory_refresh/users`).

An entry carries the `generation` of the refresh that last saw it: when a refresh reaches the
end of its list, entries of older generations (channels archived or removed, people
deactivated or gone) are deleted."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.documents.write import UNSET, Delete, Unset, Write


class DirectoryList(enum.StrEnum):
    """A list the cache holds, and the id of its refresh-state document."""

    CHANNELS = "channels"
    USERS = "users"


class ChannelField(enum.StrEnum):
    NAME = "name"  # without the `#`
    SORT_KEY = "sort_key"  # the name in lower case: listings are ordered by it, then id
    IS_PRIVATE = "is_private"
    IS_MEMBER = "is_member"  # whether the bot is in it
    GENERATION = "generation"  # the refresh that last saw it
    UPDATED_AT = "updated_at"


class UserField(enum.StrEnum):
    NAME = "name"  # the handle
    REAL_NAME = "real_name"  # "" when Slack has none
    EMAIL = "email"  # lower case; absent without users:read.email
    SORT_KEY = "sort_key"  # the real name (else the handle) in lower case
    GENERATION = "generation"
    UPDATED_AT = "updated_at"


class RefreshField(enum.StrEnum):
    GENERATION = "generation"  # the refresh under way (or the last one finished)
    CURSOR = "cursor"  # where the refresh under way resumes; absent between refreshes
    STARTED_AT = "started_at"  # when the refresh under way took its first page
    COMPLETED_AT = "completed_at"  # when the last refresh reached the end of its list
    LEASE_OWNER = "lease_owner"  # the one worker refreshing this list, until expiry
    LEASE_EXPIRES_AT = "lease_expires_at"
    WAIT_UNTIL = "wait_until"  # Slack's Retry-After of the last 429: no call before it
    WINDOW_START = "window_start"  # the minute the page budget counts in
    WINDOW_PAGES = "window_pages"  # pages taken in it
    LAST_ERROR = "last_error"  # the code of the last failed page, if any
    UPDATED_AT = "updated_at"


@dataclass(frozen=True)
class DirectoryChannel:
    id: str
    name: str
    is_private: bool
    is_member: bool

    @classmethod
    def from_document(cls, ident: str, data: dict[str, Any]) -> DirectoryChannel | None:
        name = data.get(ChannelField.NAME)
        if not isinstance(name, str) or not name:
            return None
        return cls(
            ident,
            name,
            data.get(ChannelField.IS_PRIVATE) is True,
            data.get(ChannelField.IS_MEMBER) is True,
        )


@dataclass(frozen=True)
class DirectoryUser:
    id: str
    name: str
    real_name: str

    @property
    def display(self) -> str:
        """ "@Real Name", or "@handle" without one."""
        return f"@{self.real_name or self.name}"

    @classmethod
    def from_document(cls, ident: str, data: dict[str, Any]) -> DirectoryUser | None:
        name, real_name = data.get(UserField.NAME), data.get(UserField.REAL_NAME)
        if not isinstance(name, str) or not name:
            return None
        return cls(ident, name, real_name if isinstance(real_name, str) else "")


@dataclass(frozen=True)
class RefreshState:
    """A list's refresh state as read (an absent document: a list never refreshed)."""

    generation: int = 0
    cursor: str | None = None
    completed_at: datetime | None = None
    lease_owner: str | None = None
    lease_expires_at: datetime | None = None
    wait_until: datetime | None = None
    window_start: datetime | None = None
    window_pages: int = 0

    @classmethod
    def from_document(cls, data: dict[str, Any] | None) -> RefreshState:
        if data is None:
            return cls()
        F = RefreshField
        generation, pages = data.get(F.GENERATION), data.get(F.WINDOW_PAGES)
        cursor = data.get(F.CURSOR)
        return cls(
            generation=generation if isinstance(generation, int) else 0,
            cursor=cursor if isinstance(cursor, str) and cursor else None,
            completed_at=_instant(data, F.COMPLETED_AT),
            lease_owner=_text(data, F.LEASE_OWNER),
            lease_expires_at=_instant(data, F.LEASE_EXPIRES_AT),
            wait_until=_instant(data, F.WAIT_UNTIL),
            window_start=_instant(data, F.WINDOW_START),
            window_pages=pages if isinstance(pages, int) else 0,
        )


@dataclass(frozen=True, kw_only=True)
class RefreshWrite(Write):
    generation: int | Unset = UNSET
    cursor: str | Delete | Unset = UNSET
    started_at: datetime | Unset = UNSET
    completed_at: datetime | Unset = UNSET
    lease_owner: str | Delete | Unset = UNSET
    lease_expires_at: datetime | Delete | Unset = UNSET
    wait_until: datetime | Delete | Unset = UNSET
    window_start: datetime | Unset = UNSET
    window_pages: int | Unset = UNSET
    last_error: str | Delete | Unset = UNSET
    updated_at: datetime | Unset = UNSET


@dataclass(frozen=True, kw_only=True)
class ChannelWrite(Write):
    name: str
    sort_key: str
    is_private: bool
    is_member: bool
    generation: int
    updated_at: datetime


@dataclass(frozen=True, kw_only=True)
class UserWrite(Write):
    name: str
    real_name: str
    sort_key: str
    generation: int
    updated_at: datetime
    email: str | Unset = UNSET


def _instant(data: dict[str, Any], field: str) -> datetime | None:
    value = data.get(field)
    return value if isinstance(value, datetime) else None


def _text(data: dict[str, Any], field: str) -> str | None:
    value = data.get(field)
    return value if isinstance(value, str) and value else None
