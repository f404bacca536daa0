"""Lanes: a page of due documents split by channel. A lane is one channel's documents in due
order, delivered one at a time, so the channel's order is kept and it never has two posts
at once."""

from __future__ import annotations

import enum
import zlib
from dataclasses import dataclass

from core.store import Snapshot
from processor.channel_slots import slot_channel
from processor.due_page import channel_of


class LaneState(enum.Enum):
    WAITING = "waiting"  # documents left, none in flight: it begins when its slot comes
    RUNNING = "running"  # one delivery in flight
    DONE = "done"  # every document delivered (or settled otherwise)
    DEFERRED = "deferred"  # its next slot is beyond the pass's budget: the rest waits a pass
    LOST = "lost"  # another worker won its claim or holds its channel: the rest is read again


@dataclass(eq=False)
class Lane:
    index: int  # its place in the page's order of lanes
    channel: str | None  # None: a document without a usable channel, a lane of its own
    docs: list[Snapshot]  # in due order
    # This worker wrote the channel's pacing slot last (as far as this process knows): no
    # other worker takes the lane, so it goes on whatever happens to the rest of the page.
    held: bool
    backlog: bool  # more may be due than the page holds
    state: LaneState = LaneState.WAITING
    begun: int = 0  # documents handed to a dispatcher, and not given back
    checked: bool = False  # its channel's pacing slot was read on this page

    @property
    def slot_channel(self) -> str | None:
        """The channel, if it has pacing slots (processor.channel_slots)."""
        return slot_channel(self.channel)

    @property
    def ours(self) -> bool:
        """This worker has begun the lane, or holds its channel."""
        return self.begun > 0 or self.held

    @property
    def rest(self) -> list[Snapshot]:
        """The documents not begun."""
        return self.docs[self.begun :]

    @property
    def more(self) -> bool:
        """This worker has more to post in the channel than what it has begun."""
        return self.backlog or self.begun < len(self.docs)

    def begin(self) -> Snapshot:
        """The next document, now in flight."""
        snap = self.docs[self.begun]
        self.begun += 1
        self.state = LaneState.RUNNING
        return snap

    def end(self) -> None:
        """The document in flight is settled: the lane waits for its next slot, or is done."""
        self.state = LaneState.WAITING if self.begun < len(self.docs) else LaneState.DONE

    def give_back(self) -> None:
        """The document in flight lost its claim: it is not begun after all, and the lane is
        lost (what it holds is read again)."""
        self.begun -= 1
        self.state = LaneState.LOST


def lanes(due: list[Snapshot], worker_id: str | None) -> list[list[Snapshot]]:
    """One lane per channel, each in due order (a document without a usable channel is a lane
    of its own, after the channels), the channels in order. The lanes start at a place
    derived from the worker's id (None: at the first), so workers reading the same page
    start in different places and rarely race for the same document, and a worker starts at
    about the same place of every page, among channels it has posted to."""
    by_channel: dict[tuple[bool, str], list[Snapshot]] = {}
    for snap in due:
        channel = channel_of(snap)
        key = (False, channel) if channel is not None else (True, snap.id)
        by_channel.setdefault(key, []).append(snap)
    ordered = [by_channel[key] for key in sorted(by_channel)]
    if worker_id is None:
        return ordered
    offset = zlib.crc32(worker_id.encode()) * len(ordered) >> 32
    return ordered[offset:] + ordered[:offset]
