"""The Bot Connector v3 calls the Teams stand-in answers: send an activity to a conversation,
update one in place, open a personal conversation; what it records of each.

Sources (read 2026-12-03):
- learn.microsoft.com/azure/bot-service/rest-api/bot-framework-rest-connector-api-reference:
  `POST /v3/conversations/{conversationId}/activities` (Send to Conversation, 201
  ResourceResponse `{"id"}`), `PUT /v3/conversations/{conversationId}/activities/{activityId}`
  (Update Activity, 200 ResourceResponse), `POST /v3/conversations` (Create Conversation, 201
  ConversationResourceResponse `{"id", "serviceUrl", "activityId"}`); errors are an
  ErrorResponse `{"error": {"code", "message"}}`.
- learn.microsoft.com/microsoftteams/platform/bots/how-to/conversations/
  conversation-messages, "Status codes from bot conversational APIs": 400 `BadArgument`
  (a malformed payload), 404 `ActivityNotFoundInConversation` (update of an unknown activity).
- adaptivecards.io/explorer/AdaptiveCard.html and learn.microsoft.com/microsoftteams/
  platform/task-modules-and-cards/cards/cards-reference: an Adaptive Card attachment is
  `{"contentType": "application/vnd.microsoft.card.adaptive", "content": {"type":
  "AdaptiveCard", "version", "body": [...], "actions": [...]}}`, every element an object with
  a `type`.
- learn.microsoft.com/microsoftteams/platform/bots/how-to/format-your-bot-messages: a bot
  message is at most about 100 KB, counted as UTF-16; beyond it 413 RequestEntityTooLarge
  with the code `MessageSizeTooBig` (the stand-in counts the whole activity's JSON).
- Teams channel message ids are the post's epoch milliseconds (Graph's chatMessage `id` is
  the same number), rising within a conversation.
"""

from __future__ import annotations

import copy
import json
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from emulator.teams_conversations import Conversation
from emulator.teams_http import ServiceError

ADAPTIVE_CARD = "application/vnd.microsoft.card.adaptive"
MAX_MESSAGE_BYTES = 100 * 1024  # UTF-16


def iso_millis(instant: datetime) -> str:
    """Graph's and Teams' timestamp shape: 2023-11-14T22:13:20.123Z."""
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + (
        f"{instant.microsecond // 1000:03d}Z"
    )


@dataclass(frozen=True)
class RecordedActivity:
    """An activity as it stands in a conversation (after any update)."""

    conversation_id: str
    id: str
    activity: dict[str, Any]  # as sent, with id, timestamp, from and conversation filled in
    created: str  # ISO, milliseconds, Z
    modified: str
    from_app_id: str | None  # the app that posted it; None: a person
    from_user: str | None = None  # a person's 29:… id, or a foreign bot's 28:… id
    from_name: str | None = None

    @property
    def delivery_id(self) -> str | None:
        """The id of the Container that wraps the card's body (the design note's witness)."""
        for card in cards(self.activity):
            for element in card.get("body") or []:
                if isinstance(element, dict) and element.get("type") == "Container":
                    value = element.get("id")
                    if isinstance(value, str) and value:
                        return value
        return None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RecordedActivity:
        return cls(**data)


def cards(activity: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        a["content"]
        for a in activity.get("attachments") or []
        if isinstance(a, dict)
        and a.get("contentType") == ADAPTIVE_CARD
        and isinstance(a.get("content"), dict)
    ]


def check_activity(activity: Any) -> dict[str, Any]:
    """The activity, or 400 BadArgument naming what is malformed."""
    if not isinstance(activity, dict):
        raise _bad("The activity must be a JSON object.")
    if not isinstance(activity.get("type"), str) or not activity["type"]:
        raise _bad("Activity type is required.")
    attachments = activity.get("attachments")
    if attachments is not None and not isinstance(attachments, list):
        raise _bad("attachments must be an array.")
    for index, attachment in enumerate(attachments or []):
        _check_attachment(index, attachment)
    if activity["type"] == "message" and not (activity.get("text") or attachments):
        raise _bad("Activity resulted in empty content.")
    if len(json.dumps(activity, ensure_ascii=False).encode("utf-16-le")) > MAX_MESSAGE_BYTES:
        raise ServiceError(413, "MessageSizeTooBig", "The message is over the size limit.")
    return activity


def _check_attachment(index: int, attachment: Any) -> None:
    where = f"attachments[{index}]"
    if not isinstance(attachment, dict) or not isinstance(attachment.get("contentType"), str):
        raise _bad(f"{where}: contentType is required.")
    if attachment["contentType"] != ADAPTIVE_CARD:
        return
    card = attachment.get("content")
    if not isinstance(card, dict) or card.get("type") != "AdaptiveCard":
        raise _bad(f"{where}.content: an Adaptive Card needs type AdaptiveCard.")
    if not isinstance(card.get("version"), str):
        raise _bad(f"{where}.content: an Adaptive Card needs a version.")
    for key in ("body", "actions"):
        elements = card.get(key)
        if elements is None:
            continue
        if not isinstance(elements, list):
            raise _bad(f"{where}.content.{key} must be an array.")
        for position, element in enumerate(elements):
            if not isinstance(element, dict) or not isinstance(element.get("type"), str):
                raise _bad(f"{where}.content.{key}[{position}] needs a type.")


def _bad(message: str) -> ServiceError:
    return ServiceError(400, "BadArgument", message)


class Activities:
    """Every activity in every conversation, in the order posted, and the updates taken."""

    def __init__(self) -> None:
        self._posted: list[RecordedActivity] = []
        self._updates: list[RecordedActivity] = []
        self._last_ms: dict[str, int] = {}

    def clear(self) -> None:
        self._posted.clear()
        self._updates.clear()
        self._last_ms.clear()

    def all(self) -> list[RecordedActivity]:
        return copy.deepcopy(self._posted)

    def updates(self) -> list[RecordedActivity]:
        return copy.deepcopy(self._updates)

    def in_conversation(self, conversation_id: str) -> list[RecordedActivity]:
        base = conversation_id.split(";", 1)[0]
        return [a for a in self._posted if a.conversation_id.split(";", 1)[0] == base]

    def find(self, activity_id: str) -> RecordedActivity | None:
        return next((a for a in self._posted if a.id == activity_id), None)

    def record(
        self,
        conversation: Conversation,
        activity: dict[str, Any],
        now: datetime,
        sender: dict[str, Any],
        from_app_id: str | None,
    ) -> RecordedActivity:
        activity_id = self._next_id(conversation.id, now)
        stamp = iso_millis(datetime.fromtimestamp(int(activity_id) / 1000, UTC))
        stored = {
            **copy.deepcopy(activity),
            "id": activity_id,
            "timestamp": stamp,
            "from": sender,
            "conversation": conversation.account(),
        }
        recorded = RecordedActivity(
            conversation.id,
            activity_id,
            stored,
            created=stamp,
            modified=stamp,
            from_app_id=from_app_id,
            from_user=sender.get("id"),
            from_name=sender.get("name"),
        )
        self._posted.append(recorded)
        return recorded

    def update(
        self, conversation: Conversation, activity_id: str, activity: dict[str, Any], now: datetime
    ) -> RecordedActivity:
        index = next(
            (
                i
                for i, a in enumerate(self._posted)
                if a.id == activity_id
                and a.conversation_id.split(";", 1)[0] == conversation.id.split(";", 1)[0]
            ),
            None,
        )
        if index is None:
            raise ServiceError(404, "ActivityNotFoundInConversation", "The activity was not found.")
        old = self._posted[index]
        stored = {
            **copy.deepcopy(activity),
            "id": old.id,
            "timestamp": old.activity["timestamp"],
            "from": old.activity["from"],
            "conversation": old.activity["conversation"],
        }
        modified = max(iso_millis(now), old.created)
        updated = RecordedActivity(
            old.conversation_id,
            old.id,
            stored,
            created=old.created,
            modified=modified,
            from_app_id=old.from_app_id,
            from_user=old.from_user,
            from_name=old.from_name,
        )
        self._posted[index] = updated
        self._updates.append(updated)
        return updated

    def _next_id(self, conversation_id: str, now: datetime) -> str:
        base = conversation_id.split(";", 1)[0]
        millis = max(int(now.timestamp() * 1000), self._last_ms.get(base, 0) + 1)
        self._last_ms[base] = millis
        return str(millis)
