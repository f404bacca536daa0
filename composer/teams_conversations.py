"""`GET /teams/conversations`: the Microsoft Teams conversations the bot is installed in, by
name, for the composer's destination field (a message's `teams_conversation`)."""

from __future__ import annotations

from typing import Any

from google.cloud import firestore

from composer.answers import InstalledConversation, TeamsConversationList
from composer.serialize import dump
from core.documents.teams_conversations import TeamsConversation, installed_conversations

# One page: a workspace installs the bot in far fewer conversations than this.
MAX_CONVERSATIONS = 1000


def list_teams_conversations(db: firestore.Client) -> dict[str, Any]:
    found = installed_conversations(db, MAX_CONVERSATIONS)
    return dump(TeamsConversationList(conversations=[_answer(c) for c in found]))


def _answer(conversation: TeamsConversation) -> InstalledConversation:
    fields: dict[str, Any] = {
        "id": conversation.id,
        "name": conversation.place.name,
        "conversation_type": conversation.place.conversation_type.value,
        "tenant_id": conversation.place.tenant_id,
    }
    if conversation.installed_at is not None:
        fields["installed_at"] = conversation.installed_at
    return InstalledConversation(**fields)
