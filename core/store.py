"""The Firestore store: the client, the collection names, and reads by id. The pass's
queries over a kind's collection are core.queues'.

The client reads FIRESTORE_EMULATOR_HOST itself; one client per process is reused across
requests (it holds the gRPC channel)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_document import DocumentSnapshot
from google.cloud.firestore_v1.base_query import FieldFilter

Snapshot = DocumentSnapshot[firestore.DocumentReference]

MESSAGES = "scheduled_messages"
DELIVERIES = "deliveries"
ROTATIONS = "rotations"
CHANNEL_PACING = "channel_pacing"
# How far each (kind, shard)'s scan published under DISPATCH=pubsub (core.documents.publish_marks).
PUBLISH_MARKS = "publish_marks"
# People (CONTRACT.md): categories of messages, each person's opt-outs, and notify-once events.
CATEGORIES = "categories"
PREFERENCES = "preferences"
EVENTS = "events"
RESPONSES = "responses"
# What the gates keep per person (core.documents.people): our addition.
PEOPLE = "people"
# Slack interactivity: signatures taken within the 5-minute window (replay refusal).
INTERACTION_SIGNATURES = "interaction_signatures"
# Slack's Events API: each event_id taken once, and the app's installation state per team.
SLACK_EVENTS = "slack_events"
SLACK_INSTALLATION = "slack_installation"
# Microsoft Teams: the conversations our bot is installed in (core.documents.teams_conversations).
TEAMS_CONVERSATIONS = "teams_conversations"
# The names of Slack's channels and people, cached (core.documents.directory).
DIRECTORY_CHANNELS = "directory_channels"
DIRECTORY_USERS = "directory_users"
DIRECTORY_REFRESH = "directory_refresh"


# Ids Firestore refuses or reserves (besides any with a `/`): never a stored document's.
_RESERVED_ID = re.compile(r"\.|\.\.|__.*__", re.DOTALL)
_MAX_ID_BYTES = 1500


def is_document_id(text: str) -> bool:
    """Whether `text` can name a document (so a read of it cannot be an invalid request)."""
    return (
        bool(text)
        and "/" not in text
        and not _RESERVED_ID.fullmatch(text)
        and len(text.encode("utf-8", "surrogatepass")) <= _MAX_ID_BYTES
    )


def is_timestamp(value: datetime) -> bool:
    """Whether an aware `value` is an instant Firestore can store and compare (years 1 to
    9999 in UTC: `0001-01-01T00:00+14:00` is not one)."""
    try:
        value.astimezone(UTC)
    except OverflowError:
        return False
    return True


def make_client(project: str) -> firestore.Client:
    return firestore.Client(project=project)


def read_in_order(db: firestore.Client, *refs: firestore.DocumentReference) -> list[Snapshot]:
    """Several documents in one round trip, in the order asked (a batched get answers in
    any order)."""
    found = {snap.reference.path: snap for snap in db.get_all(list(refs))}
    return [found[ref.path] for ref in refs]


def existing_ids(db: firestore.Client, refs: list[firestore.DocumentReference]) -> set[str]:
    """Which of `refs` exist, in one round trip."""
    return {doc.id for doc in db.get_all(refs) if doc.exists}


def newest_entry(db: firestore.Client, subject: str, subject_id: str, order: str) -> Any:
    """The `order` field (an occurrence's instant or day) of the newest ledger entry whose
    `subject` field (`message_id`, `rotation_id`) is `subject_id`; None without one. Through
    the (subject, order desc) index the deliveries listings use."""
    query = (
        db.collection(DELIVERIES)
        .where(filter=FieldFilter(subject, "==", subject_id))
        .order_by(order, direction=firestore.Query.DESCENDING)
        .limit(1)
    )
    return next((snap.get(order) for snap in query.stream()), None)
