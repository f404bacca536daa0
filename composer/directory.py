"""`GET /directory/channels`, `GET /directory/users` and `GET /me`: the names the composer's
pickers offer, from the directory cache (core.directory), and who the signed-in person is in
Slack.

A directory read never waits on Slack, with one exception: a list that was never refreshed
takes its first page inline (core.directory_refresh.start_if_never), so a fresh deployment's
picker is not empty before the first tick."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from composer.answers import (
    ChannelList,
    DirectoryChannel,
    DirectoryUser,
    Me,
    SlackPerson,
    UserList,
)
from composer.serialize import dump
from composer.validation import Problems, whole_number
from core.auth import Principal
from core.directory import After, Found, list_channels, list_users, user_by_email
from core.directory_refresh import lookup_by_email, start_if_never
from core.documents.directory import DirectoryList
from core.runtime import Runtime
from core.store import is_document_id

DEFAULT_LIMIT = 50
MAX_LIMIT = 200
MAX_Q = 100


class DirectoryQuery(BaseModel):
    """The directory listings' query parameters."""

    q: str | None = Field(
        None, max_length=MAX_Q, description="case-insensitive part of a name or real name"
    )
    limit: int = Field(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT)
    cursor: str | None = Field(
        None,
        min_length=1,
        pattern=r"^[A-Za-z0-9_-]+$",
        description="the previous page's `next_cursor`, exactly as it was answered",
    )


@dataclass(frozen=True)
class Listing:
    q: str
    after: After | None
    limit: int


def listing_from(query: Any) -> Listing:
    """`q`, `limit` and `cursor` (422 naming each bad one)."""
    problems = Problems()
    q = query.get("q") or ""
    if len(q) > MAX_Q:
        problems.add("q", f"must be at most {MAX_Q} characters")
    limit = whole_number(problems, "limit", query.get("limit"), MAX_LIMIT, DEFAULT_LIMIT)
    after = None
    raw = query.get("cursor")
    if raw is not None:
        after = _decode(raw)
        if after is None:
            problems.add("cursor", "is not a cursor this API returned")
    problems.raise_if_any()
    return Listing(q, after, limit)


def channels(rt: Runtime, listing: Listing) -> dict[str, Any]:
    _start(rt, DirectoryList.CHANNELS)
    found = list_channels(rt.db, listing.q, listing.after, listing.limit)
    items = [DirectoryChannel(**item) for item in found.items]
    return dump(ChannelList(channels=items, next_cursor=_next(found)))


def users(rt: Runtime, listing: Listing) -> dict[str, Any]:
    _start(rt, DirectoryList.USERS)
    found = list_users(rt.db, listing.q, listing.after, listing.limit)
    items = [DirectoryUser(**item) for item in found.items]
    return dump(UserList(users=items, next_cursor=_next(found)))


def me(rt: Runtime, principal: Principal | None) -> dict[str, Any]:
    """The signed-in person's email and Slack account: the cached person with that email,
    else Slack's `users.lookupByEmail`. The admin token and triggers are nobody: both null."""
    if principal is None or principal.kind != "person" or not principal.email:
        return dump(Me(email=None, slack_user=None))
    email = principal.email
    cached = user_by_email(rt.db, email)
    if cached is not None:
        person = SlackPerson(id=cached.id, name=cached.name, real_name=cached.real_name)
        return dump(Me(email=email, slack_user=person))
    found = lookup_by_email(rt.settings, email)
    return dump(Me(email=email, slack_user=None if found is None else _person(found)))


def _person(user: dict[str, Any]) -> SlackPerson | None:
    raw_profile = user.get("profile")
    profile: dict[str, Any] = raw_profile if isinstance(raw_profile, dict) else {}
    ident, name = user.get("id"), user.get("name")
    real = user.get("real_name") or profile.get("real_name")
    if not isinstance(ident, str) or not isinstance(name, str):
        return None
    return SlackPerson(id=ident, name=name, real_name=real if isinstance(real, str) else "")


def _start(rt: Runtime, which: DirectoryList) -> None:
    start_if_never(rt.db, rt.clock, rt.settings, rt.worker_id, which)


def _next(found: Found) -> str | None:
    if found.next is None:
        return None
    after = found.next
    raw = json.dumps({"k": after.sort_key, "id": after.ident, "s": after.source}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode(cursor: str) -> After | None:
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        after = After(data["k"], data["id"], data["s"])
    except (binascii.Error, ValueError, TypeError, KeyError, RecursionError):
        return None
    fields = (after.sort_key, after.ident, after.source)
    if not all(isinstance(f, str) for f in fields) or after.source not in ("slack", "teams"):
        return None
    if not is_document_id(after.ident):
        return None
    return after
