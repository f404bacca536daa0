"""Lanes: a page of due documents split by channel. A lane is one channel's documents in due
order, delivered one at a time, so the channel's order is kept and it never has two posts
at once."""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass

from core.store import Snapshot
from processor.channel_slots import slot_channel
from processor.due_page import channel_of


class LaneState(enum.Enum):
    WAITING = "waiting"  # documents left, none in flight: it begins when its slot comes
    RUNNING = "running"  # one delivery in flight
    DONE = "done"  # every document delivered (or settled otherwise)
    DEFERRED = "deferred"  # its next slot is beyond the pass's budget: the rest waits a pass
    LOST = "lost"  # an overlapping pass won its claim or the channel's slot: the rest waits


@dataclass(eq=False)
class Lane:
    index: int  # its place in the page's order of lanes
    channel: str | None  # None: a document without a usable channel, a lane of its own
    docs: list[Snapshot]  # in due order
    state: LaneState = LaneState.WAITING
    begun: int = 0  # documents handed to a dispatcher, and not given back
    retried: bool = False  # a claim lost to the channel's slot was tried again
    jumps: int = 0  # the page's jumps (processor.deliver_page) when its last delivery began

    @property
    def slot_channel(self) -> str | None:
        """The channel, if it has pacing slots (processor.channel_slots)."""
        return slot_channel(self.channel)

    @property
    def rest(self) -> list[Snapshot]:
        """The documents not begun."""
        return self.docs[self.begun :]

    def begin(self) -> Snapshot:
        """The next document, now in flight."""
        snap = self.docs[self.begun]
        self.begun += 1
        self.state = LaneState.RUNNING
        return snap

    def end(self) -> None:
        """The document in flight is settled: the lane waits for its next slot, or is done."""
        self.state = LaneState.WAITING if self.begun < len(self.docs) else LaneState.DONE

    def give_back(self, *, retry: bool) -> None:
        """The document in flight lost its claim: it is not begun after all. With `retry`
        (only the channel's slot was lost), the lane claims it again at the slot's time,
        once; otherwise the lane is lost (its rest stays due for the next pass)."""
        self.begun -= 1
        if retry and not self.retried:
            self.retried = True
            self.state = LaneState.WAITING
        else:
            self.state = LaneState.LOST


def lanes(due: list[Snapshot]) -> list[list[Snapshot]]:
    """One lane per channel, each in due order (a document without a usable channel is a lane
    of its own, after the channels), the channels in order."""
    by_channel: dict[tuple[bool, str], list[Snapshot]] = {}
    for snap in due:
        channel = channel_of(snap)
        key = (False, channel) if channel is not None else (True, snap.id)
        by_channel.setdefault(key, []).append(snap)
    return [by_channel[key] for key in sorted(by_channel)]


def rotated(lanes: list[list[Snapshot]], key: str) -> list[list[Snapshot]]:
    """The lanes in their order, begun at a place `key` picks (the pass's worker and start):
    passes that overlap over one page each begin in a region of their own, instead of all
    claiming the same documents at once and all but one losing each claim. A channel's
    documents stay in due order within its lane."""
    if not lanes:
        return lanes
    digest = hashlib.blake2b(key.encode(), digest_size=8).digest()
    start = int.from_bytes(digest, "big") % len(lanes)
    return lanes[start:] + lanes[:start]
