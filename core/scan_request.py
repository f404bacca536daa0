"""The Pub/Sub message asking `deliver` to scan one (kind, shard) for what is due
(DISPATCH=pubsub, processor.scan): published by the tick, one per shard when SHARDS is
above 1, and by a scan whose page was full, for the rest. docs/pubsub.md gives the format.

It travels on the due occurrences' topic in their format 1 (core.pubsub), `kind` SCAN,
`subject_id` `<kind>-<shard>` and `shards` the tick's SHARDS, with no ordering key: a scan
must not wait behind a channel's posts, nor hold them back. Losing one loses nothing: the
next tick asks again."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.documents.publish_marks import mark_id
from core.pubsub import MalformedMessage
from core.settings import MAX_SHARDS

SCAN = "scan"
FORMAT = 1


@dataclass(frozen=True)
class ScanRequest:
    """Scan `kind`'s shard `shard` of `shards` (the asking tick's SHARDS, so that `deliver`
    scans the same shards whatever its own setting); `asked_at` is the tick's now."""

    kind: str
    shard: int
    shards: int
    asked_at: datetime

    @property
    def subject_id(self) -> str:
        return mark_id(self.kind, self.shard)

    def data(self) -> bytes:
        body = {
            "format": FORMAT,
            "kind": SCAN,
            "subject_id": self.subject_id,
            "shards": self.shards,
            "due_at": self.asked_at.isoformat(),
        }
        return json.dumps(body, sort_keys=True).encode()

    def attributes(self) -> dict[str, str]:
        return {"kind": SCAN, "subject_id": self.subject_id}

    @classmethod
    def of(cls, subject_id: str, asked_at: datetime, message: Any, kinds: set[str]) -> ScanRequest:
        """From a push's `message` that core.pubsub has read already (its `data` is base64
        JSON): MalformedMessage naming `shards` unless it is an integer in 1..MAX_SHARDS, or
        `subject_id` unless it names a known kind and a shard below `shards`."""
        shards = json.loads(base64.b64decode(message["data"])).get("shards")
        if type(shards) is not int or not 1 <= shards <= MAX_SHARDS:
            detail = f"must be an integer in 1..{MAX_SHARDS}, got {shards!r}"
            raise MalformedMessage("shards", detail)
        kind, _, shard = subject_id.rpartition("-")
        if kind not in kinds or not (shard.isascii() and shard.isdigit()) or int(shard) >= shards:
            detail = f"must be <kind>-<shard> with a shard below {shards}, got {subject_id!r}"
            raise MalformedMessage("subject_id", detail)
        return cls(kind, int(shard), shards, asked_at)
