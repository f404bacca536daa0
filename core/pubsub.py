"""The Pub/Sub message a `tick` publishes for one due occurrence (DISPATCH=pubsub), and the
process's publisher client. docs/pubsub.md gives the format; `deliver` reads it back.

A message only says which document to look at: the document in Firestore stays the truth
about what is due, and its ledger entry about what was sent. So a message delivered twice,
late, or out of order posts nothing twice: `deliver` claims through the ledger, as the
inline pass does.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from google.cloud.pubsub_v1 import PublisherClient, types

# The `format` of what this module writes; a reader refuses any other.
FORMAT = 1


class MalformedMessage(Exception):
    """A Pub/Sub message `deliver` cannot act on: `field` names what is missing or wrong."""

    def __init__(self, field: str, detail: str) -> None:
        super().__init__(f"{field}: {detail}")
        self.field = field
        self.detail = detail


@dataclass(frozen=True)
class DueOccurrence:
    """One due document, as a tick found it: its kind, its id, the `next_run_at` it was due
    at, and where it posts (the ordering key)."""

    kind: str
    subject_id: str
    due_at: datetime
    channel: str

    def data(self) -> bytes:
        body = {
            "format": FORMAT,
            "kind": self.kind,
            "subject_id": self.subject_id,
            "due_at": self.due_at.isoformat(),
        }
        return json.dumps(body, sort_keys=True).encode()

    def attributes(self) -> dict[str, str]:
        """Readable in the console and usable in a subscription filter; not read back."""
        return {"kind": self.kind, "subject_id": self.subject_id}

    @classmethod
    def from_pubsub(cls, message: Any) -> DueOccurrence:
        """From the `message` of a push (or of a CloudEvent's data): `data` base64 JSON."""
        if not isinstance(message, dict):
            raise MalformedMessage("message", "missing or not an object")
        raw = message.get("data")
        if not isinstance(raw, str):
            raise MalformedMessage("message.data", "missing or not a base64 string")
        try:
            body = json.loads(base64.b64decode(raw, validate=True))
        except (binascii.Error, ValueError):
            raise MalformedMessage("message.data", "not base64-encoded JSON") from None
        if not isinstance(body, dict):
            raise MalformedMessage("message.data", "not a JSON object")
        if body.get("format") != FORMAT:
            raise MalformedMessage("format", f"must be {FORMAT}, got {body.get('format')!r}")
        for name in ("kind", "subject_id", "due_at"):
            if not isinstance(body.get(name), str) or not body[name]:
                raise MalformedMessage(name, "missing or not a non-empty string")
        try:
            due_at = datetime.fromisoformat(body["due_at"])
        except ValueError:
            detail = f"not an ISO-8601 instant: {body['due_at']!r}"
            raise MalformedMessage("due_at", detail) from None
        if due_at.tzinfo is None:
            raise MalformedMessage("due_at", f"has no UTC offset: {body['due_at']!r}")
        ordering_key = message.get("orderingKey")
        channel = ordering_key if isinstance(ordering_key, str) else ""
        return cls(body["kind"], body["subject_id"], due_at, channel)


@functools.lru_cache(maxsize=1)
def publisher() -> PublisherClient:
    """This process's publisher, ordering on (a message with an ordering key is delivered
    after the earlier ones with the same key). Built once: it keeps its channel and batches.
    PUBSUB_EMULATOR_HOST, when set, points it at the emulator."""
    options = types.PublisherOptions(enable_message_ordering=True)
    return PublisherClient(publisher_options=options)
