"""`teams_conversations/{conversation id}` (CONTRACT.md, "Microsoft Teams"): a Teams
conversation our bot was installed in, and where to post to it. Written by the `teams`
target from Bot Framework install and remove activities (targets.teams); read by the Teams
transport (its `service_url`, tenant and Graph ids) and listed by the composer.

Each write is decided on the document as it was read and lands only on that version (a
create when it was absent, else an update under its update time), so an install and a
removal of the same conversation arriving together never leave a mix of the two. An
activity older than the one the document last took (`activity_at`, Bot Framework's
`timestamp`) changes nothing: Teams may deliver a removal and the re-install after it out
of order."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from google.api_core.exceptions import AlreadyExists, FailedPrecondition
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from core.documents.write import DELETE, UNSET, Delete, Unset, Write, write_as_read
from core.store import TEAMS_CONVERSATIONS

# Each retry follows a concurrent write of the same conversation; there are at most a few
# activities per install, so a third loss means something else is wrong.
_WRITE_TRIES = 5


class TeamsConversationField(enum.StrEnum):
    SERVICE_URL = "service_url"  # the Bot Connector base URL to post to (the activity's)
    TENANT_ID = "tenant_id"
    CONVERSATION_TYPE = "conversation_type"  # a ConversationType
    NAME = "name"  # what the composer lists it by
    TEAM_ID = "team_id"  # channels: the team's Bot Framework id (`19:…@thread.tacv2`)
    AAD_GROUP_ID = "aad_group_id"  # channels: the team's Entra group id (Graph's team id)
    CHANNEL_ID = "channel_id"  # channels: Graph's channel id (the conversation id)
    USER_ID = "user_id"  # personal: the person's Teams user id (`29:…`; ours)
    USER_AAD_ID = "user_aad_id"  # personal: the person's Entra object id, when sent (ours)
    STATUS = "status"  # a ConversationStatus
    INSTALLED_AT = "installed_at"  # when the current install was first seen
    REMOVED_AT = "removed_at"  # while removed: when
    ACTIVITY_AT = "activity_at"  # the `timestamp` of the last activity taken (ours)
    UPDATED_AT = "updated_at"


class ConversationType(enum.StrEnum):
    CHANNEL = "channel"
    GROUP_CHAT = "groupChat"
    PERSONAL = "personal"


class ConversationStatus(enum.StrEnum):
    INSTALLED = "installed"
    REMOVED = "removed"


@dataclass(frozen=True)
class Place:
    """What an install or remove activity says about its conversation."""

    service_url: str
    tenant_id: str
    conversation_type: ConversationType
    name: str
    team_id: str | None = None
    aad_group_id: str | None = None
    channel_id: str | None = None
    user_id: str | None = None
    user_aad_id: str | None = None


@dataclass(frozen=True)
class TeamsConversation:
    """A stored conversation, as read."""

    id: str
    place: Place
    status: ConversationStatus
    installed_at: datetime | None
    removed_at: datetime | None

    @property
    def installed(self) -> bool:
        return self.status is ConversationStatus.INSTALLED

    @classmethod
    def from_document(cls, ident: str, data: dict[str, Any]) -> TeamsConversation | None:
        """The stored conversation, or None when the document does not hold one (a field
        missing or of another type: never posted to)."""
        F = TeamsConversationField
        try:
            place = Place(
                service_url=_text(data, F.SERVICE_URL),
                tenant_id=_text(data, F.TENANT_ID),
                conversation_type=ConversationType(data.get(F.CONVERSATION_TYPE, "")),
                name=_text(data, F.NAME),
                team_id=_optional_text(data, F.TEAM_ID),
                aad_group_id=_optional_text(data, F.AAD_GROUP_ID),
                channel_id=_optional_text(data, F.CHANNEL_ID),
                user_id=_optional_text(data, F.USER_ID),
                user_aad_id=_optional_text(data, F.USER_AAD_ID),
            )
            status = ConversationStatus(data.get(F.STATUS, ""))
        except (TypeError, ValueError):
            return None
        return cls(
            id=ident,
            place=place,
            status=status,
            installed_at=_instant(data, F.INSTALLED_AT),
            removed_at=_instant(data, F.REMOVED_AT),
        )


@dataclass(frozen=True, kw_only=True)
class ConversationWrite(Write):
    """Some of a conversation's fields."""

    service_url: str | Unset = UNSET
    tenant_id: str | Unset = UNSET
    conversation_type: ConversationType | Unset = UNSET
    name: str | Unset = UNSET
    team_id: str | Unset = UNSET
    aad_group_id: str | Unset = UNSET
    channel_id: str | Unset = UNSET
    user_id: str | Unset = UNSET
    user_aad_id: str | Unset = UNSET
    status: ConversationStatus | Unset = UNSET
    installed_at: datetime | Unset = UNSET
    removed_at: datetime | Delete | Unset = UNSET
    activity_at: datetime | Unset = UNSET
    updated_at: datetime | Unset = UNSET


def read_conversation(db: firestore.Client, ident: str) -> TeamsConversation | None:
    """`teams_conversations/{ident}`; None when absent or unreadable."""
    snap = db.collection(TEAMS_CONVERSATIONS).document(ident).get()
    if not snap.exists:
        return None
    return TeamsConversation.from_document(ident, snap.to_dict() or {})


def installed_conversations(db: firestore.Client, limit: int) -> list[TeamsConversation]:
    """The installed conversations by name (then id), at most `limit`: through the
    (status, name) index."""
    F = TeamsConversationField
    query = (
        db.collection(TEAMS_CONVERSATIONS)
        .where(filter=FieldFilter(F.STATUS.value, "==", ConversationStatus.INSTALLED.value))
        .order_by(F.NAME.value)
        .limit(limit)
    )
    found = (TeamsConversation.from_document(s.id, s.to_dict() or {}) for s in query.stream())
    return [c for c in found if c is not None]


def record_install(
    db: firestore.Client, ident: str, place: Place, at: datetime | None, now: datetime
) -> bool:
    """Marks `ident` installed at `place`; its `installed_at` stays that of the install
    already recorded when Teams says it twice (an installationUpdate and a
    conversationUpdate for one install). False when a later activity was already taken."""

    def change(stored: dict[str, Any] | None) -> ConversationWrite:
        again = (
            stored is not None
            and stored.get(TeamsConversationField.STATUS) == ConversationStatus.INSTALLED
        )
        return ConversationWrite(
            **_place_fields(place),
            status=ConversationStatus.INSTALLED,
            installed_at=UNSET if again else now,
            removed_at=UNSET if stored is None else DELETE,
        )

    return _apply(db, ident, change, at, now)


def record_removal(
    db: firestore.Client, ident: str, place: Place, at: datetime | None, now: datetime
) -> bool:
    """Marks `ident` removed (recording where it was, when it was never seen installed).
    False when a later activity was already taken."""

    def change(stored: dict[str, Any] | None) -> ConversationWrite:
        already = (
            stored is not None
            and stored.get(TeamsConversationField.STATUS) == ConversationStatus.REMOVED
        )
        fields = _place_fields(place) if stored is None else {}
        return ConversationWrite(
            **fields, status=ConversationStatus.REMOVED, removed_at=UNSET if already else now
        )

    return _apply(db, ident, change, at, now)


def _apply(
    db: firestore.Client,
    ident: str,
    change: Any,
    at: datetime | None,
    now: datetime,
) -> bool:
    """Writes `change(stored document)` on the document as read, again on a fresh read when
    another writer came in between."""
    ref = db.collection(TEAMS_CONVERSATIONS).document(ident)
    for _ in range(_WRITE_TRIES):
        snap = ref.get()  # pragma: SYNCPOINT teams_conversation
        stored = snap.to_dict() if snap.exists else None
        last = None if stored is None else stored.get(TeamsConversationField.ACTIVITY_AT)
        if at is not None and isinstance(last, datetime) and at < last:
            return False
        write: ConversationWrite = change(stored)
        fields = ConversationWrite(updated_at=now, activity_at=UNSET if at is None else at)
        document = write.to_document() | fields.to_document()
        batch = db.batch()
        write_as_read(batch, ref, document, snap.update_time if snap.exists else None)
        try:
            batch.commit()  # pragma: SYNCPOINT teams_conversation
        except (AlreadyExists, FailedPrecondition):
            continue
        return True
    raise RuntimeError(f"teams_conversations/{ident} kept changing under its writes")


def _status(stored: dict[str, Any] | None) -> ConversationStatus | None:
    value = None if stored is None else stored.get(TeamsConversationField.STATUS)
    return ConversationStatus(value) if value in tuple(ConversationStatus) else None


def _place_fields(place: Place) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "service_url": place.service_url,
        "tenant_id": place.tenant_id,
        "conversation_type": place.conversation_type,
        "name": place.name,
    }
    for name in ("team_id", "aad_group_id", "channel_id", "user_id", "user_aad_id"):
        value = getattr(place, name)
        if value is not None:
            fields[name] = value
    return fields


def _text(data: dict[str, Any], field: TeamsConversationField) -> str:
    value = data.get(field)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{field} is not a text")
    return value


def _optional_text(data: dict[str, Any], field: TeamsConversationField) -> str | None:
    value = data.get(field)
    return value if isinstance(value, str) and value else None


def _instant(data: dict[str, Any], field: TeamsConversationField) -> datetime | None:
    value = data.get(field)
    return value if isinstance(value, datetime) else None
