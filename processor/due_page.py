"""A page of due documents (of any kind) that no one channel can fill.

The due query is oldest first across all channels, and a channel takes at most one post a
second (processor.pacing), so a channel with a backlog would fill every page while it is
paced, and every other channel would wait passes on end for it (a one-off with `expires_at`
expiring unsent). So a channel's share of a page is capped: at most a quarter of the page
(`MAX_SHARE`), and never more than `per_channel` (what a pass can post to it in its budget).
When a full read had channels at that cap, it reads on from the head without them
(core.queues.Queue.due `excluding`), so the room goes to the other channels; room they
leave is given back to the capped channels, oldest first, up to `per_channel` each. The
common page, where no channel reaches the cap, is the one read it was."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from core.documents.subjects import SubjectField
from core.queues import MAX_EXCLUDED
from core.store import Snapshot

# A channel takes at most 1/MAX_SHARE of a page while other channels' documents are due.
MAX_SHARE = 4

# Reads at most `limit` due documents, oldest first, none of the channels named.
Read = Callable[[int, list[str]], list[Snapshot]]


@dataclass(frozen=True)
class DuePage:
    subjects: list[Snapshot]  # oldest first, at most `per_channel` of any one channel
    read: int  # documents read
    left: list[str]  # ids read but left for a later pass: what a channel has beyond its cap
    more: bool  # more may be due than this page holds


def fair_page(read: Read, limit: int, per_channel: int) -> DuePage:
    """At most `limit` due documents, at most `per_channel` of them in any one channel: a
    read, and while a full read has channels at their share (module doc), one more without
    them (at most MAX_EXCLUDED channels are left out; what the last read holds is capped as
    it is). Room the other channels leave goes back to the capped ones."""
    share = min(per_channel, -(-limit // MAX_SHARE))
    kept: list[Snapshot] = []  # the messages of the channels found at their share
    over: list[Snapshot] = []  # what those channels had beyond it
    excluded: list[str] = []
    total, asked = 0, limit
    while True:
        batch = read(asked, excluded)
        total += len(batch)
        counts = Counter(c for snap in batch if (c := channel_of(snap)) is not None)
        # Those a read can leave out next (a channel left in is capped in that read).
        at_cap = [c for c, n in counts.items() if n >= share][: MAX_EXCLUDED - len(excluded)]
        full = len(batch) >= asked
        if not full or not at_cap:
            page, extra = _capped(batch, share)
            # A read that left channels out cannot tell how many more of theirs are due.
            more = full or bool(excluded)
            return _filled(kept, page, over + extra, limit, per_channel, total, more=more)
        page, extra = _capped([s for s in batch if channel_of(s) in at_cap], share)
        kept, over, excluded = kept + page, over + extra, excluded + at_cap
        asked = limit - len(kept)
        if asked <= 0:
            return _filled(kept, [], over, limit, per_channel, total, more=True)


def channel_of(snap: Snapshot) -> str | None:
    """Where the message posts, as the pass knows it: its channel; for a message to a person
    their user id, which stands for their DM (the bot has one DM per person, whose id is
    only known once the claim has opened it; a `channel: null` beside a `user` counts as no
    channel). None when it names neither as a string."""
    # One field at a time, not to_dict(): that deep-copies the whole document, on every call.
    for field in (SubjectField.CHANNEL, SubjectField.USER, SubjectField.TEAMS_CONVERSATION):
        try:
            value = snap.get(field)
        except KeyError:
            continue
        if value is not None:
            return value if isinstance(value, str) else None
    return None


def _capped(batch: list[Snapshot], share: int) -> tuple[list[Snapshot], list[Snapshot]]:
    """The batch with at most `share` messages of each channel (the oldest), and the rest."""
    taken: Counter[str | None] = Counter()
    page, extra = [], []
    for snap in batch:
        channel = channel_of(snap)
        taken[channel] += 1
        if channel is not None and taken[channel] > share:
            extra.append(snap)
        else:
            page.append(snap)
    return page, extra


def _filled(
    kept: list[Snapshot],
    batch: list[Snapshot],
    over: list[Snapshot],
    limit: int,
    per_channel: int,
    read: int,
    *,
    more: bool,
) -> DuePage:
    """The page: what was kept, the last read's batch, and as much of `over` (messages of
    channels past their share) as the room holds, oldest first, at most `per_channel` of a
    channel; the rest of `over` is left for a later pass. `more`: more may be due."""
    taken = Counter(channel_of(snap) for snap in kept + batch)
    room = limit - len(kept) - len(batch)
    given: list[Snapshot] = []
    left: list[str] = []
    for snap in sorted(over, key=lambda snap: snap.get(SubjectField.NEXT_RUN_AT)):
        channel = channel_of(snap)
        if room > 0 and taken[channel] < per_channel:
            given.append(snap)
            taken[channel] += 1
            room -= 1
        else:
            left.append(snap.id)
    if not kept and not given:
        return DuePage(batch, read, left, more or bool(left))  # one read: in its order already
    # Stable: each channel's documents keep the order they were read in.
    subjects = sorted(kept + batch + given, key=lambda snap: snap.get(SubjectField.NEXT_RUN_AT))
    return DuePage(subjects, read, left, more or bool(left))
