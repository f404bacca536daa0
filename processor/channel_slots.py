"""Pacing across workers: `channel_pacing/{channel}` says when a channel may next be posted
to (`next_post_at`) and which worker posted to it last (`worker`).

Every claim that will post writes its channel's slot in the claim's own batch, conditioned
on the slot as this worker last saw it (or on its absence): no extra commit, and two workers
can never both claim a post to one channel at one moment; the loser's claim fails whole and
its message stays due. A pass reads the slots of a page's channels in one batched get and
leaves a channel that another worker is posting to right now (its slot is in the future or
just passed) to that worker, so workers divide the channels between them instead of racing
for them, and each channel keeps at most one post per second whoever posts it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from google.cloud import firestore

from core.runtime import Runtime
from core.store import CHANNEL_PACING
from processor.pacing import POST_INTERVAL

# A channel whose slot is this close is still its last worker's: that worker claims its next
# message in the channel as soon as the slot comes, and racing it would only lose.
HOLD = timedelta(seconds=2)


@dataclass(frozen=True)
class Slot:
    """A channel's slot as this worker last saw it: what a claim's precondition is."""

    ref: firestore.DocumentReference
    version: Any | None  # the update time read or written; None: no document yet
    next_post_at: datetime | None = None
    worker: str | None = None

    def claim_fields(self, worker: str, now: datetime) -> dict[str, Any]:
        return {"next_post_at": now + POST_INTERVAL, "worker": worker, "updated_at": now}


class ChannelSlots:
    """The slots of the channels one pass posts to (threads of the pass share it)."""

    def __init__(self, rt: Runtime) -> None:
        self._rt = rt
        self._lock = threading.Lock()
        self._slots: dict[str, Slot] = {}

    def read(self, channels: Iterable[str]) -> None:
        """One batched read of the channels' slots (what other workers did meanwhile)."""
        refs = [self._rt.db.collection(CHANNEL_PACING).document(c) for c in set(channels)]
        if not refs:
            return
        fresh: dict[str, Slot] = {}
        for snap in self._rt.db.get_all(refs):
            data = snap.to_dict() or {}
            next_post_at = data.get("next_post_at")
            worker = data.get("worker")
            fresh[snap.id] = Slot(
                snap.reference,
                snap.update_time if snap.exists else None,
                next_post_at if isinstance(next_post_at, datetime) else None,
                worker if isinstance(worker, str) else None,
            )
        with self._lock:
            self._slots.update(fresh)

    def held_elsewhere(self, channel: str, now: datetime) -> bool:
        slot = self.get(channel)
        return (
            slot is not None
            and slot.worker not in (None, self._rt.worker_id)
            and slot.next_post_at is not None
            and now < slot.next_post_at + HOLD
        )

    def get(self, channel: str) -> Slot | None:
        with self._lock:
            return self._slots.get(channel)

    def claimed(self, channel: str, version: Any, now: datetime) -> None:
        """Our claim wrote the slot: the next claim in the channel is conditioned on that."""
        with self._lock:
            slot = self._slots.get(channel)
            if slot is not None:
                self._slots[channel] = Slot(
                    slot.ref, version, now + POST_INTERVAL, self._rt.worker_id
                )
