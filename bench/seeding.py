"""The data every contender runs on: deterministic documents, so a floor worker can know its
share without reading, and every run's posts can be matched to what was seeded."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from google.cloud import firestore

from core.documents.messages import MessageField, MessageWrite, Status
from core.documents.write import UNSET
from core.models import message_delivery_id
from core.platform import SLACK, TEAMS
from core.shards import shard_of
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


def conversation(n: int, channels: int, channel_tag: str, platform: str) -> str:
    """Where message `n` posts: a Slack channel id, or a Teams channel's conversation id."""
    if platform == TEAMS:
        return f"19:{channel_tag.lower()}{n % channels:05d}@thread.tacv2"
    return f"C{n % channels:05d}{channel_tag}"


def message(
    prefix: str,
    n: int,
    channels: int,
    due: datetime,
    channel_tag: str = "BENCH",
    platform: str = SLACK,
    shards: int = 1,
) -> tuple[Seeded, dict[str, Any]]:
    seeded = Seeded(f"{prefix}{n:06d}", conversation(n, channels, channel_tag, platform), due)
    data = MessageWrite(
        text=f"**Benchmark** message {n}: stand-up in 5 minutes",
        timezone="UTC",
        send_at=due,
        next_run_at=due,
        status=Status.PENDING,
        version=1,
        # With SHARDS > 1 each document carries its shard, as the API writes it.
        shard=shard_of(seeded.doc_id, shards) if shards > 1 else UNSET,
    ).to_document()
    # The typed write has no `teams_conversation`: it is added by its field name.
    where = MessageField.TEAMS_CONVERSATION if platform == TEAMS else MessageField.CHANNEL
    data[where] = seeded.channel
    return seeded, data


def seed(
    db: firestore.Client,
    prefix: str,
    count: int,
    channels: int,
    due: datetime,
    channel_tag: str = "BENCH",
    platform: str = SLACK,
    shards: int = 1,
    threads: int = 4,
) -> list[Seeded]:
    """`count` waiting one-offs due at `due` over `channels` conversations of `platform` (in
    `shards` shards), in batches of 500 committed `threads` at a time."""
    rows = [message(prefix, n, channels, due, channel_tag, platform, shards) for n in range(count)]

    def commit(chunk: list[tuple[Seeded, dict[str, Any]]]) -> None:
        batch = db.batch()
        for seeded, data in chunk:
            batch.set(db.collection(MESSAGES).document(seeded.doc_id), data)
        batch.commit()

    chunks = [rows[i : i + BATCH] for i in range(0, len(rows), BATCH)]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(commit, chunks))
    return [seeded for seeded, _ in rows]
