"""A document snapshot as bytes and back: what a tick's Pub/Sub message carries, so that
`deliver` claims the document as the tick's query read it, without reading it again.

The bytes are Firestore's own `Document` protobuf (name, fields, create and update time),
its fields encoded by the client library's own value encoding, so every type Firestore
stores comes back as the library would have read it (timestamps to the nanosecond,
references, geo points, bytes, maps, arrays, vectors). The update time is what a claim is
conditioned on (processor.claim): a snapshot decoded from an older version of the document
fails its claim, as a stale read would.
"""

from __future__ import annotations

from google.cloud import firestore
from google.cloud.firestore_v1 import _helpers
from google.cloud.firestore_v1.base_document import DocumentSnapshot
from google.cloud.firestore_v1.types import Document

from core.store import Snapshot


class Undecodable(ValueError):
    """Bytes that are no document snapshot of this client's database."""


def encode(snap: Snapshot) -> bytes:
    """An existing document's snapshot (as a query or a get returned it), serialized."""
    if not snap.exists:
        raise ValueError(f"{snap.reference.path} does not exist: nothing to encode")
    document = Document(
        name=snap.reference._document_path,
        fields=_helpers.encode_dict(snap.to_dict() or {}),
        create_time=snap.create_time,
        update_time=snap.update_time,
    )
    serialized: bytes = Document.serialize(document)
    return serialized


def decode(db: firestore.Client, data: bytes) -> Snapshot:
    """The snapshot `encode` wrote, its reference on `db`. Its `read_time` is its update
    time: the message does not say when the tick read it, only that it was at or after
    that. Undecodable when `data` is no Document protobuf, names no document of `db`'s
    database, or has no update time (a claim could not be conditioned on it)."""
    try:
        document = Document.deserialize(data)
    except Exception as exc:  # protobuf's DecodeError, and whatever else bad bytes raise
        raise Undecodable(f"not a Firestore Document protobuf ({type(exc).__name__})") from None
    prefix = f"{db._database_string}/documents/"
    if not document.name.startswith(prefix):
        raise Undecodable(f"names no document of this database: {document.name!r}")
    path = document.name.removeprefix(prefix)
    parts = path.split("/")
    if len(parts) % 2 or not all(parts):
        raise Undecodable(f"not a document's path: {path!r}")
    if "update_time" not in document or "create_time" not in document:
        raise Undecodable("has no create and update time")
    try:
        fields = _helpers.decode_dict(document.fields, db)
    except (ValueError, TypeError) as exc:  # e.g. a reference to another database
        raise Undecodable(f"a field does not decode ({exc})") from None
    return DocumentSnapshot(
        db.document(path),
        fields,
        exists=True,
        read_time=document.update_time,
        create_time=document.create_time,
        update_time=document.update_time,
    )
