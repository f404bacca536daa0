"""The `teams_conversation` a message, rotation or event names, as the API checks it when it
is written: a `teams_conversations` document the `teams` target stored when the bot was
installed there, and not since removed; else a 422 naming `teams_conversation`. One removed
later is the send's concern (it ends `failed`, `conversation_removed`). A `user` beside it
(a message to a person, for their gates) must be the person of that personal chat."""

from __future__ import annotations

from google.cloud import firestore

from core.documents.teams_conversations import ConversationType, read_conversation
from core.errors import ValidationFailed
from core.models import TEAMS_CONVERSATION_ID

FIELD = "teams_conversation"


def check_installed(
    db: firestore.Client, conversation: str | None, person: str | None = None
) -> None:
    """422 `teams_conversation` unless the bot is installed in `conversation` (422 `user`
    when `person` is given and is not whom that personal chat is with); nothing when none
    is named or its id is malformed (the body's own checks name that)."""
    if conversation is None or not TEAMS_CONVERSATION_ID.match(conversation):
        return
    stored = read_conversation(db, conversation)
    if stored is None:
        _refuse(FIELD, f"{conversation[:80]!r} is not installed: the Teams app was never added")
    elif not stored.installed:
        _refuse(FIELD, f"{conversation[:80]!r} was removed: the Teams app is no longer there")
    elif person is not None and (
        stored.place.conversation_type is not ConversationType.PERSONAL
        or stored.place.user_id != person
    ):
        _refuse("user", f"{person[:80]!r} is not the person of the personal chat {FIELD} names")


def _refuse(field: str, message: str) -> None:
    raise ValidationFailed(f"invalid fields: {field}", [{"field": field, "message": message}])
