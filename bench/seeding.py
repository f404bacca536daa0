"""The data every contender runs on: deterministic documents, so a floor worker can know its
share without reading, and every run's posts can be matched to what was seeded."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from google.cloud import firestore

from core.documents.messages import MessageWrite, Status
from core.models import message_delivery_id
from core.store import MESSAGES

BATCH = 500  # Firestore's limit of writes per commit


@dataclass(frozen=True)
class Seeded:
    """One seeded message, as the metrics need it."""

    doc_id: str
    channel: str
    due: datetime

    @property
    def delivery_id(self) -> str:
        return message_delivery_id(self.doc_id, self.due)


def message(
    prefix: str, n: int, channels: int, due: datetime, channel_tag: str = "BENCH"
) -> tuple[Seeded, dict[str, Any]]:
    seeded = Seeded(f"{prefix}{n:06d}", f"C{n % channels:05d}{channel_tag}", due)
    data = MessageWrite(
        channel=seeded.channel,
        text=f"**Benchmark** message {n}: stand-up in 5 minutes",
        timezone="UTC",
        send_at=due,
        next_run_at=due,
        status=Status.PENDING,
        version=1,
    )
    return seeded, data.to_document()


def seed(
    db: firestore.Client,
    prefix: str,
    count: int,
    channels: int,
    due: datetime,
    channel_tag: str = "BENCH",
) -> list[Seeded]:
    """`count` waiting one-offs due at `due`, in batches of 500 committed four at a time."""
    rows = [message(prefix, n, channels, due, channel_tag) for n in range(count)]

    def commit(chunk: list[tuple[Seeded, dict[str, Any]]]) -> None:
        batch = db.batch()
        for seeded, data in chunk:
            batch.set(db.collection(MESSAGES).document(seeded.doc_id), data)
        batch.commit()

    chunks = [rows[i : i + BATCH] for i in range(0, len(rows), BATCH)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(commit, chunks))
    return [seeded for seeded, _ in rows]
