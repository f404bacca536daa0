"""The `teams_conversation` a message, rotation or event names, as the API checks it when it
is written: a `teams_conversations` document the `teams` target stored when the bot was
installed there, and not since removed; else a 422 naming `teams_conversation`. One removed
later is the send's concern (it ends `failed`, `conversation_removed`)."""

from __future__ import annotations

from google.cloud import firestore

from core.errors import ValidationFailed
from core.models import TEAMS_CONVERSATION_ID

TEAMS_CONVERSATIONS = "teams_conversations"
FIELD = "teams_conversation"
# `teams_conversations.status` as the `teams` target writes it (docs/teams.md); read here by
# name until core/documents/teams_conversations.py owns the field names.
_STATUS, _INSTALLED = "status", "installed"


def check_installed(db: firestore.Client, conversation: str | None) -> None:
    """422 `teams_conversation` unless the bot is installed in `conversation`; nothing when
    none is named or its id is malformed (the body's own checks name that)."""
    if conversation is None or not TEAMS_CONVERSATION_ID.match(conversation):
        return
    data = db.collection(TEAMS_CONVERSATIONS).document(conversation).get().to_dict()
    if data is None:
        _refuse(f"{conversation[:80]!r} is not installed: the Teams app was never added there")
    elif data.get(_STATUS) != _INSTALLED:
        _refuse(f"{conversation[:80]!r} was removed: the Teams app is no longer installed there")


def _refuse(message: str) -> None:
    raise ValidationFailed(f"invalid fields: {FIELD}", [{"field": FIELD, "message": message}])
