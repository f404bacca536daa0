"""Pacing between overlapping inline passes (a pass that outlives its minute, a trigger that
fires twice, `targets.worker` beside the tick): `channel_pacing/{channel}:{minute}` says when
a channel may next be posted to (`next_post_at`) and which worker posted to it last
(`worker`), one document per channel per UTC minute in which it was posted to
(`2026-11-30T09:00`). Under DISPATCH=pubsub the ordering key is the fence instead
(processor.pacing.hold_channel).

Every claim that will post writes its channel's slot in the claim's own batch: no extra
commit. The write is conditioned on the slot as this process last saw it, or, when this
process knows nothing of the slot, it is a create(): there was no post to the channel in
this minute, or the claim fails. Either way, two workers can never both claim a post to one
channel at one moment; the loser's claim fails whole and its message stays due. A claim
whose next slot (plus HOLD) reaches into the next minute writes that minute's slot too, so
a post at 09:00:59.5 is seen by a claim at 09:01:00.2.

One slot per minute is what makes the usual pass read no slots at all: a channel's first
post in a minute needs no read, and the slots this process wrote are remembered across
passes (Runtime.known_slots). A lost claim reads its slots again, so the next claim in the
channel is conditioned on them and paced after them. The slots expire (`expires_at`, a TTL
policy in firestore.indexes.json) a day after they were written.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from google.cloud import firestore

from core import logs
from core.documents.channel_pacing import PacingField, SlotWrite
from core.documents.write import write_as_read
from core.models import CHANNEL_ID, TEAMS_CONVERSATION_ID, USER_ID
from core.named_batch import Landed, NamedBatch
from core.runtime import Runtime
from core.store import CHANNEL_PACING, Snapshot
from processor.pacing import POST_INTERVAL, interval_for

# A claim whose slot is this close to the next minute takes that minute's slot too.
HOLD = timedelta(seconds=2)
# How long a slot document is kept before the TTL policy deletes it.
KEEP = timedelta(days=1)
# What another worker adds to the second between posts: its post follows its claim's commit,
# ours followed our claim's, and under load one claim and post can take far longer than
# the other (250 ms was not always enough on a loaded emulator). This worker paces its own
# posts from when Slack answered the last one, which needs no margin.
HANDOVER = timedelta(seconds=1)


_PACED = (CHANNEL_ID, USER_ID, TEAMS_CONVERSATION_ID)


def slot_channel(channel: str | None) -> str | None:
    """The channel if it has pacing slots: only well-formed ids do (and can be part of a
    document id), a Slack conversation's or, for messages to a person, the user id that
    stands for their DM (processor.due_page.channel_of), or a Teams conversation's; a
    document with any other channel is rejected by its claim, with its code, like every bad
    document."""
    if channel is not None and any(p.match(channel) for p in _PACED):
        return channel
    return None


def slot_id(channel: str, at: datetime) -> str:
    """The channel's slot document for the UTC minute of `at`."""
    return f"{channel}:{at.astimezone(UTC):%Y-%m-%dT%H:%M}"


@dataclass(frozen=True)
class Slot:
    """One minute's slot of a channel as this process last saw it: what a claim's write of
    it is conditioned on."""

    ref: firestore.DocumentReference
    version: Any | None  # the update time read or written; None: no document as far as we know
    next_post_at: datetime | None = None
    worker: str | None = None
    interval: timedelta = POST_INTERVAL  # its channel's (processor.pacing.interval_for)

    def write(self, batch: NamedBatch, worker: str, now: datetime) -> None:
        fields = SlotWrite(
            next_post_at=now + self.interval + HANDOVER,
            worker=worker,
            updated_at=now,
            expires_at=now + KEEP,
        ).to_document()
        write_as_read(batch, self.ref, fields, self.version)


def take_slots(batch: NamedBatch, slots: tuple[Slot, ...], worker: str, now: datetime) -> None:
    """A claim's slot writes, added to its batch."""
    for slot in slots:
        slot.write(batch, worker, now)


def slot_versions(landed: Landed, slots: tuple[Slot, ...]) -> tuple[Any, ...]:
    """The update times the claim's commit gave its slots (see `take_slots`)."""
    return tuple(landed.version(slot.ref) for slot in slots)


class ChannelSlots:
    """The channels' slots as one pass sees them (threads of the pass share it), on top of
    what the process remembers."""

    def __init__(self, rt: Runtime) -> None:
        self._rt = rt
        self._known = rt.known_slots

    def _read(
        self,
        refs: list[firestore.DocumentReference],
        now: datetime,
        subject: Snapshot | None = None,
    ) -> bool:
        """Read the slots (and, in the same call, `subject`'s document): whether `subject`
        is still the version read (True without one)."""
        if not refs:
            return True
        extra = [subject.reference] if subject is not None else []
        unchanged = True
        for snap in self._rt.db.get_all(refs + extra):
            if subject is not None and snap.reference.path == subject.reference.path:
                unchanged = snap.exists and snap.update_time == subject.update_time
                continue
            data = snap.to_dict() or {}
            next_post_at = data.get(PacingField.NEXT_POST_AT)
            worker = data.get(PacingField.WORKER)
            self._remember(
                Slot(
                    snap.reference,
                    snap.update_time if snap.exists else None,
                    next_post_at if isinstance(next_post_at, datetime) else None,
                    worker if isinstance(worker, str) else None,
                ),
                now,
            )
        return unchanged

    def next_post_at(self, channel: str, now: datetime) -> datetime | None:
        slot = self._slot(channel, now)
        return slot.next_post_at if slot is not None else None

    def for_claim(self, channel: str, now: datetime) -> tuple[Slot, ...]:
        """The slots a claim at `now` takes: this minute's, and the next minute's too when
        the claim's slot and hold reach into it."""
        interval = interval_for(channel)
        ids = dict.fromkeys([slot_id(channel, now), slot_id(channel, now + interval + HOLD)])
        slots = (self._known.get(i, now) or Slot(self._ref(i), None) for i in ids)
        return tuple(replace(slot, interval=interval) for slot in slots)

    def claimed(self, slots: tuple[Slot, ...], versions: tuple[Any, ...], now: datetime) -> None:
        """Our claim wrote these slots: the next claim in the channel is conditioned on that."""
        for slot, version in zip(slots, versions, strict=True):
            next_post_at = now + slot.interval
            taken = Slot(slot.ref, version, next_post_at, self._rt.worker_id, slot.interval)
            self._remember(taken, now)

    def lost(self, slots: tuple[Slot, ...], now: datetime, subject: Snapshot) -> bool:
        """A claim of `subject` that took these slots failed: an overlapping pass may be
        posting to the channel, so they are read again (without that, every claim of ours in
        the channel would fail the same way until the minute is over), with the document in
        the same read. Whether the document is still the version read: if so only the slot
        was lost and the claim may be tried again at the slot's time; if not, another pass
        claimed it (or it was edited), and a second try could only fail."""
        try:
            return self._read([slot.ref for slot in slots], now, subject)
        except Exception as exc:
            # Not knowing them, the next claim creates them: it fails if they exist, and
            # then they are read again. Nothing is claimed on a guess.
            for slot in slots:
                self._known.forget(slot.ref.id)
            logs.warning(
                "reading a channel's pacing slot failed",
                slots=[slot.ref.id for slot in slots],
                error_code=type(exc).__name__,
                error_message=str(exc),
            )
            return False

    def _slot(self, channel: str, now: datetime) -> Slot | None:
        slot: Slot | None = self._known.get(slot_id(channel, now), now)
        return slot

    def _remember(self, slot: Slot, now: datetime) -> None:
        # Useful until its minute and hold are over; then the next minute's slot counts.
        self._known.put(slot.ref.id, slot, now + timedelta(minutes=1) + HOLD, now)

    def _ref(self, doc_id: str) -> firestore.DocumentReference:
        return self._rt.db.collection(CHANNEL_PACING).document(doc_id)
