"""`Idempotency-Key` on creates: a retried POST returns the record the first one made.

A key is stored as `idempotency_keys/{sha256(key)}` with the hash of the route and body,
the id it created and an `expires_at` 24 h later. The key document is `create()`d in the
same batch as the record, so of two concurrent retries exactly one creates; the other fails
the create and answers with the winner's record. Expired keys are ignored when read (a TTL
policy on `expires_at` deletes them in production) and replaced under a precondition, so a
key may be reused after a day.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from google.cloud import firestore

from core.documents.idempotency_keys import KeyField, KeyWrite
from core.documents.write import write_as_read
from core.errors import BadRequest, ValidationFailed
from core.store import Snapshot

KEYS = "idempotency_keys"
KEY_LIFETIME = timedelta(hours=24)
HEADER = "Idempotency-Key"
MAX_KEY_LENGTH = 255


@dataclass(frozen=True)
class Replay:
    """The key was used before with the same body: answer with this record."""

    target_id: str


@dataclass(frozen=True)
class Fresh:
    """The key is unused (or expired): create, and record the key in the same batch."""

    reference: firestore.DocumentReference
    route: str
    body_sha256: str
    expired: Snapshot | None  # an expired key document to replace, under a precondition


def key_from(headers: Any) -> str | None:
    key = headers.get(HEADER)
    if key is None:
        return None
    if not 1 <= len(key) <= MAX_KEY_LENGTH or not key.isprintable() or not key.isascii():
        raise BadRequest(f"{HEADER} must be 1..{MAX_KEY_LENGTH} printable ASCII characters")
    return str(key)


def body_hash(route: str, body: dict[str, Any]) -> str:
    """Whitespace and key order do not make a body different; the route does."""
    canonical = json.dumps([route, body], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def look_up(
    db: firestore.Client, key: str, route: str, body: dict[str, Any], now: datetime
) -> Replay | Fresh:
    reference = db.collection(KEYS).document(hashlib.sha256(key.encode("utf-8")).hexdigest())
    digest = body_hash(route, body)
    snap = reference.get()
    data = snap.to_dict() or {}
    expires_at = data.get(KeyField.EXPIRES_AT)
    if not snap.exists or not isinstance(expires_at, datetime) or expires_at <= now:
        return Fresh(reference, route, digest, snap if snap.exists else None)
    if data.get(KeyField.BODY_SHA256) != digest:
        raise ValidationFailed(
            f"this {HEADER} was already used with a different request",
            [{"field": HEADER, "message": "already used with a different body or route"}],
        )
    return Replay(str(data[KeyField.TARGET_ID]))


def create(
    db: firestore.Client,
    reference: firestore.DocumentReference,
    document: dict[str, Any],
    key: Fresh | None,
    now: datetime,
) -> None:
    """Creates the record at `reference` and, with a `key`, the key's document in the same
    commit: of two requests with one key, exactly one creates."""
    batch = db.batch()
    batch.create(reference, document)
    if key is not None:
        record(batch, key, reference.id, now)
    batch.commit()


def record(batch: Any, key: Fresh, target_id: str, now: datetime) -> None:
    """The key's document, written in `batch` (with what it creates): `target_id` is what a
    replay of the key answers."""
    fields = KeyWrite(
        route=key.route,
        body_sha256=key.body_sha256,
        target_id=target_id,
        created_at=now,
        expires_at=now + KEY_LIFETIME,
    ).to_document()
    replaced = None if key.expired is None else key.expired.update_time
    write_as_read(batch, key.reference, fields, replaced)
