"""Which shard of the due scan a subject belongs to: a stable hash of its document id.

Firestore limits writes into an index whose field takes sequential values (`next_run_at`)
to about 500 a second; a `shard` field leading the due query's index spreads those writes
over SHARDS ranges (docs/sharding.md). The hash is sha256, so every process and every
version agrees on a document's shard (Python's own `hash()` of a string changes per process).
"""

from __future__ import annotations

import hashlib


def shard_of(doc_id: str, shards: int) -> int:
    """The shard, 0..shards-1, of the document named `doc_id`."""
    digest = hashlib.sha256(doc_id.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % shards


def in_range(value: object, shards: int) -> bool:
    """Whether a stored `shard` is one the due scan reads with `shards` shards."""
    return type(value) is int and 0 <= value < shards
