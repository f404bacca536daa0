"""A page of due messages that no one channel can fill.

The due query is oldest first across all channels, and a channel takes at most one post a
second (processor.pacing), so a channel with a backlog would fill every page while it is
paced, and every other channel would wait passes on end for it (a one-off with `expires_at`
expiring unsent). A page keeps at most `per_channel` messages of a channel (what a pass can
post to it in its budget); when a full read had channels at that cap, it reads on from the
head without them (core.store.due_messages `excluding`), so the room goes to the other
channels. The common page, where no channel reaches the cap, is the one read it was."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from core.documents.messages import MessageField
from core.store import MAX_EXCLUDED, Snapshot

# Reads at most `limit` due messages, oldest first, none of the channels named.
Read = Callable[[int, list[str]], list[Snapshot]]


@dataclass(frozen=True)
class DuePage:
    messages: list[Snapshot]  # oldest first, at most `per_channel` of any one channel
    read: int  # documents read
    left: list[str]  # ids read but left for a later pass: what a channel has beyond its cap
    more: bool  # more may be due than this page holds


def fair_page(read: Read, limit: int, per_channel: int) -> DuePage:
    """At most `limit` due messages, at most `per_channel` of them in any one channel: a
    read, and while a full read has channels at their cap, one more without them (at most
    MAX_EXCLUDED channels are left out; what the last read holds is capped as it is)."""
    kept: list[Snapshot] = []  # the messages of the channels found at their cap
    excluded: list[str] = []
    left: list[str] = []
    total, asked = 0, limit
    while True:
        batch = read(asked, excluded)
        total += len(batch)
        counts = Counter(c for snap in batch if (c := channel_of(snap)) is not None)
        # Those a read can leave out next (a channel left in is capped in that read).
        at_cap = [c for c, n in counts.items() if n >= per_channel][: MAX_EXCLUDED - len(excluded)]
        full = len(batch) >= asked
        if not full or not at_cap:
            if max(counts.values(), default=0) > per_channel:
                batch, extra = _capped(batch, per_channel)
                left = left + extra
            return _page(kept, batch, total, left, more=full or bool(left))
        page, extra = _capped([s for s in batch if channel_of(s) in at_cap], per_channel)
        kept, left, excluded = kept + page, left + extra, excluded + at_cap
        asked = limit - len(kept)
        if asked <= 0:
            return _page(kept, [], total, left, more=True)


def channel_of(snap: Snapshot) -> str | None:
    """Where the message posts, as the pass knows it: its channel; for a message to a person
    their user id, which stands for their DM (the bot has one DM per person, whose id is
    only known once the claim has opened it; a `channel: null` beside a `user` counts as no
    channel). None when it names neither as a string."""
    # One field at a time, not to_dict(): that deep-copies the whole document, on every call.
    for field in (MessageField.CHANNEL, MessageField.USER):
        try:
            value = snap.get(field)
        except KeyError:
            continue
        if value is not None:
            return value if isinstance(value, str) else None
    return None


def _capped(batch: list[Snapshot], per_channel: int) -> tuple[list[Snapshot], list[str]]:
    """The batch with at most `per_channel` messages of each channel (the oldest), and the
    ids of the rest."""
    taken: Counter[str | None] = Counter()
    page, extra = [], []
    for snap in batch:
        channel = channel_of(snap)
        taken[channel] += 1
        if channel is not None and taken[channel] > per_channel:
            extra.append(snap.id)
        else:
            page.append(snap)
    return page, extra


def _page(
    kept: list[Snapshot], batch: list[Snapshot], read: int, left: list[str], *, more: bool
) -> DuePage:
    if not kept:
        return DuePage(batch, read, left, more)  # one read: in its order already
    # Stable: each channel's messages come from one read, in its order.
    messages = sorted(kept + batch, key=lambda snap: snap.get(MessageField.NEXT_RUN_AT))
    return DuePage(messages, read, left, more)
