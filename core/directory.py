"""Names for ids, from the directory cache in Firestore (core.documents.directory; filled by
core.directory_refresh): `display_names` for answers, and the pages of channels and people
the composer's pickers search. Reads only: nothing here calls Slack."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from core.documents.directory import (
    ChannelField,
    DirectoryChannel,
    DirectoryList,
    DirectoryUser,
    RefreshState,
    UserField,
)
from core.documents.teams_conversations import (
    ConversationStatus,
    TeamsConversation,
    TeamsConversationField,
)
from core.models import CHANNEL_ID, USER_ID
from core.store import (
    DIRECTORY_CHANNELS,
    DIRECTORY_REFRESH,
    DIRECTORY_USERS,
    TEAMS_CONVERSATIONS,
    is_document_id,
)

# `<@U123>`, `<@U123|name>`, `<#C123>`, `<#C123|name>`: Slack's mentions in message text.
_MENTION = re.compile(r"<([@#])([A-Z0-9]+)(?:\|[^>]*)?>")
# A listing scans at most this many cached entries for one page of `q` matches: a search
# that matches almost nothing in a huge workspace ends with a cursor, never a slow request.
MAX_SCAN = 2000


def display_names(db: firestore.Client, ids: Iterable[str]) -> dict[str, str]:
    """Each known id's name: a Slack channel's "#name", a Slack person's "@Real Name" (or
    "@handle"), a Teams conversation's stored name. Ids the cache does not know are left out.
    One batched read, whatever the number of ids."""
    refs = {ident: ref for ident in set(ids) if (ref := _ref(db, ident)) is not None}
    if not refs:
        return {}
    names: dict[str, str] = {}
    for snap in db.get_all(list(refs.values())):
        name = _name(snap.reference.parent.id, snap.id, snap.to_dict() if snap.exists else None)
        if name is not None:
            names[snap.id] = name
    return names


def ids_in_text(text: str | None) -> set[str]:
    """The channel and person ids mentioned in a message's text (`<@U…>`, `<#C…>`)."""
    return {match.group(2) for match in _MENTION.finditer(text or "")}


@dataclass(frozen=True)
class After:
    """Where a listing resumes: after the entry with this sort key and id, in this source
    (channels: Slack's, then Teams')."""

    sort_key: str
    ident: str
    source: str = "slack"


@dataclass(frozen=True)
class Found:
    items: list[dict[str, Any]]
    next: After | None


def list_channels(db: firestore.Client, q: str, after: After | None, limit: int) -> Found:
    """Slack's channels by name, then the installed Teams conversations by name, whose name
    contains `q` (case-insensitively)."""
    items: list[dict[str, Any]] = []
    if after is None or after.source == "slack":
        items, last = _scan(db, DIRECTORY_CHANNELS, ChannelField.SORT_KEY, q, after, limit)
        if last is not None:
            return Found(items, last)
        after = None
    rest, last = _scan_teams(db, q, after, limit - len(items))
    return Found(items + rest, last)


def list_users(db: firestore.Client, q: str, after: After | None, limit: int) -> Found:
    """People by real name (else handle) whose handle or real name contains `q`."""
    items, last = _scan(db, DIRECTORY_USERS, UserField.SORT_KEY, q, after, limit)
    return Found(items, last)


def user_by_email(db: firestore.Client, email: str) -> DirectoryUser | None:
    """The cached person with this email (users:read.email), None if none is cached."""
    query = (
        db.collection(DIRECTORY_USERS)
        .where(filter=FieldFilter(UserField.EMAIL.value, "==", email.lower()))
        .limit(1)
    )
    for snap in query.stream():
        return DirectoryUser.from_document(snap.id, snap.to_dict() or {})
    return None


def refresh_state(db: firestore.Client, which: DirectoryList) -> RefreshState | None:
    """A list's refresh state; None when it was never refreshed."""
    snap = db.collection(DIRECTORY_REFRESH).document(which.value).get()
    return RefreshState.from_document(snap.to_dict()) if snap.exists else None


# --- helpers ------------------------------------------------------------------------------


def _ref(db: firestore.Client, ident: str) -> firestore.DocumentReference | None:
    if USER_ID.match(ident):
        return db.collection(DIRECTORY_USERS).document(ident)
    if CHANNEL_ID.match(ident):
        return db.collection(DIRECTORY_CHANNELS).document(ident)
    if ident.startswith(("U", "W", "C", "G", "D")) and ident.isalnum():
        return None  # a Slack-shaped id that is not one: never a Teams conversation's
    return db.collection(TEAMS_CONVERSATIONS).document(ident) if is_document_id(ident) else None


def _name(collection: str, ident: str, data: dict[str, Any] | None) -> str | None:
    if data is None:
        return None
    if collection == DIRECTORY_CHANNELS:
        channel = DirectoryChannel.from_document(ident, data)
        return None if channel is None else f"#{channel.name}"
    if collection == DIRECTORY_USERS:
        user = DirectoryUser.from_document(ident, data)
        return None if user is None else user.display
    name = data.get(TeamsConversationField.NAME)
    return name if isinstance(name, str) and name else None


def _scan(
    db: firestore.Client, collection: str, key: str, q: str, after: After | None, limit: int
) -> tuple[list[dict[str, Any]], After | None]:
    query = db.collection(collection).order_by(key).order_by("__name__")
    if after is not None:
        query = query.start_after({key: after.sort_key, "__name__": _doc(db, collection, after)})
    return _matches(_entries(collection, query.limit(MAX_SCAN).stream()), q, limit, "slack")


def _scan_teams(
    db: firestore.Client, q: str, after: After | None, limit: int
) -> tuple[list[dict[str, Any]], After | None]:
    F = TeamsConversationField
    query = (
        db.collection(TEAMS_CONVERSATIONS)
        .where(filter=FieldFilter(F.STATUS.value, "==", ConversationStatus.INSTALLED.value))
        .order_by(F.NAME.value)
        .order_by("__name__")
    )
    if after is not None:
        doc = _doc(db, TEAMS_CONVERSATIONS, after)
        query = query.start_after({F.NAME.value: after.sort_key, "__name__": doc})
    return _matches(_teams_entries(query.limit(MAX_SCAN).stream()), q, limit, "teams")


def _doc(db: firestore.Client, collection: str, after: After) -> firestore.DocumentReference:
    return db.collection(collection).document(after.ident)


# Sort key, id, the listed item (None: a document that holds none), the words searched.
_Entry = tuple[str, str, dict[str, Any] | None, tuple[str, ...]]


def _matches(
    entries: Iterator[_Entry], q: str, limit: int, source: str
) -> tuple[list[dict[str, Any]], After | None]:
    """Up to `limit` items whose searched words contain `q`, and where the next page starts
    (None at the end of the entries)."""
    needle = q.casefold()
    items: list[dict[str, Any]] = []
    last: After | None = None
    scanned = 0
    for sort_key, ident, item, searched in entries:
        scanned += 1
        last = After(sort_key, ident, source)
        if item is not None and any(needle in word.casefold() for word in searched):
            items.append(item)
            if len(items) == limit:
                return items, last
    return items, (last if scanned == MAX_SCAN else None)


def _entries(collection: str, snaps: Iterable[Any]) -> Iterator[_Entry]:
    for snap in snaps:
        data = snap.to_dict() or {}
        if collection == DIRECTORY_CHANNELS:
            yield _key(data, ChannelField.SORT_KEY), snap.id, *_channel_item(snap.id, data)
        else:
            yield _key(data, UserField.SORT_KEY), snap.id, *_user_item(snap.id, data)


def _channel_item(
    ident: str, data: dict[str, Any]
) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
    channel = DirectoryChannel.from_document(ident, data)
    if channel is None:
        return None, ()
    item = {
        "id": channel.id,
        "name": channel.name,
        "is_private": channel.is_private,
        "is_member": channel.is_member,
        "platform": "slack",
    }
    return item, (channel.name,)


def _user_item(ident: str, data: dict[str, Any]) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
    user = DirectoryUser.from_document(ident, data)
    if user is None:
        return None, ()
    return {"id": user.id, "name": user.name, "real_name": user.real_name}, (
        user.name,
        user.real_name,
    )


def _teams_entries(snaps: Iterable[Any]) -> Iterator[_Entry]:
    for snap in snaps:
        data = snap.to_dict() or {}
        conversation = TeamsConversation.from_document(snap.id, data)
        if conversation is None:
            yield _key(data, TeamsConversationField.NAME), snap.id, None, ()
            continue
        name = conversation.place.name
        item = {
            "id": conversation.id,
            "name": name,
            "is_private": False,
            "is_member": True,
            "platform": "teams",
        }
        yield name, conversation.id, item, (name,)


def _key(data: dict[str, Any], field: str) -> str:
    value = data.get(field)
    return value if isinstance(value, str) else ""
