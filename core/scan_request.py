"""The Pub/Sub message asking `deliver` to scan one (kind, shard) for what is due
(DISPATCH=pubsub, processor.scan): published by the tick, one per shard when SHARDS is
above 1, and by a scan whose page was full, for the rest. docs/pubsub.md gives the format.

It travels on the due occurrences' topic in their format 1 (core.pubsub), `kind` SCAN and
`subject_id` `<kind>-<shard>`, with no ordering key: a scan must not wait behind a
channel's posts, nor hold them back. Losing one loses nothing: the next tick asks again."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from core.documents.publish_marks import mark_id
from core.pubsub import MalformedMessage

SCAN = "scan"
FORMAT = 1


@dataclass(frozen=True)
class ScanRequest:
    """Scan `kind`'s shard `shard`; `asked_at` is the asking tick's now (for logs)."""

    kind: str
    shard: int
    asked_at: datetime

    @property
    def subject_id(self) -> str:
        return mark_id(self.kind, self.shard)

    def data(self) -> bytes:
        body = {
            "format": FORMAT,
            "kind": SCAN,
            "subject_id": self.subject_id,
            "due_at": self.asked_at.isoformat(),
        }
        return json.dumps(body, sort_keys=True).encode()

    def attributes(self) -> dict[str, str]:
        return {"kind": SCAN, "subject_id": self.subject_id}

    @classmethod
    def parse(
        cls, subject_id: str, asked_at: datetime, kinds: set[str], shards: int
    ) -> ScanRequest:
        """From a message's `subject_id`: MalformedMessage("subject_id") unless it names a
        known kind and a shard in 0..shards-1 (a request from before SHARDS was lowered
        is refused: the tick asks for the shards there are now)."""
        kind, _, shard = subject_id.rpartition("-")
        if kind not in kinds or not (shard.isascii() and shard.isdigit()) or int(shard) >= shards:
            detail = f"must be <kind>-<shard> with a shard below {shards}, got {subject_id!r}"
            raise MalformedMessage("subject_id", detail)
        return cls(kind, int(shard), asked_at)
