"""The Pub/Sub message a `tick` publishes for one due occurrence (DISPATCH=pubsub), and the
process's publisher client. docs/pubsub.md gives the format; `deliver` reads it back.

A message carries the due document as the tick's query read it (format 2: its snapshot,
core.snapshot_codec), so `deliver` claims it without reading it again. The claim is
conditioned on that snapshot's update time: a message older than the document (edited,
claimed or settled since) claims nothing, and the document in Firestore stays the truth
about what is due, its ledger entry about what was sent. So a message delivered twice,
late, or out of order posts nothing twice. Format 1 (no snapshot: `deliver` reads the
document) is still read, for messages published before a deploy.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Self

from google.cloud import firestore
from google.cloud.pubsub_v1 import PublisherClient, types

from core import snapshot_codec
from core.documents.subjects import SubjectField
from core.store import Snapshot

# The `format` this module writes for a due document's snapshot; FORMATS: what it reads.
FORMAT = 2
FORMATS = (1, 2)


class MalformedMessage(Exception):
    """A Pub/Sub message `deliver` cannot act on: `field` names what is missing or wrong."""

    def __init__(self, field: str, detail: str) -> None:
        super().__init__(f"{field}: {detail}")
        self.field = field
        self.detail = detail


@dataclass(frozen=True)
class DueOccurrence:
    """One due document, as a tick found it: its kind, its id, the `next_run_at` it was due
    at, where it posts (the ordering key), and its snapshot as the tick read it (None: a
    format-1 message, or one that names no document, as an `answers` message)."""

    kind: str
    subject_id: str
    due_at: datetime
    channel: str
    snapshot: Snapshot | None = None

    @classmethod
    def for_snapshot(cls, kind: str, snap: Snapshot, channel: str) -> Self | None:
        """The message for a due document a query returned, carrying it; None when its
        `next_run_at` is not an instant (a due query only returns those)."""
        due_at = (snap.to_dict() or {}).get(SubjectField.NEXT_RUN_AT)
        if not isinstance(due_at, datetime):
            return None
        return cls(kind, snap.id, due_at, channel, snap)

    def data(self) -> bytes:
        body: dict[str, Any] = {
            "format": 1 if self.snapshot is None else FORMAT,
            "kind": self.kind,
            "subject_id": self.subject_id,
            "due_at": self.due_at.isoformat(),
        }
        if self.snapshot is not None:
            body["document"] = base64.b64encode(snapshot_codec.encode(self.snapshot)).decode()
        return json.dumps(body, sort_keys=True).encode()

    def attributes(self) -> dict[str, str]:
        """Readable in the console and usable in a subscription filter; not read back."""
        return {"kind": self.kind, "subject_id": self.subject_id}

    @classmethod
    def from_pubsub(cls, message: Any, db: firestore.Client) -> DueOccurrence:
        """From the `message` of a push (or of a CloudEvent's data): `data` base64 JSON; a
        format-2 message's snapshot decoded on `db`."""
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
        if body.get("format") not in FORMATS:
            raise MalformedMessage("format", f"must be 1 or 2, got {body.get('format')!r}")
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
        snapshot = _snapshot(db, body) if body["format"] == FORMAT else None
        return cls(body["kind"], body["subject_id"], due_at, channel, snapshot)


def _snapshot(db: firestore.Client, body: dict[str, Any]) -> Snapshot:
    """A format-2 body's `document`: the snapshot of the document it names by its id."""
    raw = body.get("document")
    if not isinstance(raw, str) or not raw:
        raise MalformedMessage("document", "missing or not a base64 string")
    try:
        snap = snapshot_codec.decode(db, base64.b64decode(raw, validate=True))
    except binascii.Error:
        raise MalformedMessage("document", "not base64") from None
    except snapshot_codec.Undecodable as exc:
        raise MalformedMessage("document", str(exc)) from None
    if snap.id != body["subject_id"]:
        raise MalformedMessage("document", f"names {snap.reference.path!r}, not subject_id")
    return snap


@functools.lru_cache(maxsize=1)
def publisher() -> PublisherClient:
    """This process's publisher, ordering on (a message with an ordering key is delivered
    after the earlier ones with the same key). Built once: it keeps its channel and batches.
    PUBSUB_EMULATOR_HOST, when set, points it at the emulator."""
    options = types.PublisherOptions(enable_message_ordering=True)
    return PublisherClient(publisher_options=options)
