"""Pacing: at most one post per interval per channel within a pass (a Slack channel's
second, a Teams conversation's two), and a pass that ends in time for the next one.

Slack allows about one message per second per channel; Teams allows a bot 7 a second, 8 in
2 s, 60 in 30 s and 1,800 an hour in one conversation (docs/teams-limits.md), which one post
every 2 s keeps under for good. A burst of 200 due messages to one conversation must not
trip either limit. The pacer waits (on the injected clock) until the
channel's next slot. When that slot is past the pass's budget, the message is left for the
next pass instead: not claimed, so nothing is held and nothing is lost."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from core.clock import Clock
from core.documents.errors import ErrorField
from core.documents.subjects import SubjectField
from core.models import CHANNEL_ID, USER_ID
from core.platform import DEFAULT_RETRY_AFTER, Outcome, PostResult
from core.runtime import RecentPosts
from core.settings import Settings
from core.slack import RATE_LIMITED
from core.subscription import ack_deadline_seconds

POST_INTERVAL = timedelta(seconds=1)  # a Slack channel's (or a person's DM's)
TEAMS_POST_INTERVAL = timedelta(seconds=2)  # a Teams conversation's: 1,800 an hour


def interval_for(channel: str) -> timedelta:
    """The pacing interval of a channel key (processor.due_page.channel_of): Slack's ids
    (`C…`, `D…`, a person's `U…`) never look like a Teams conversation id (`19:…`, `a:…`)."""
    if CHANNEL_ID.match(channel) or USER_ID.match(channel):
        return POST_INTERVAL
    return TEAMS_POST_INTERVAL


class ChannelPacer:
    def __init__(self, clock: Clock, budget: timedelta, recent: RecentPosts | None = None) -> None:
        self._clock = clock
        now = clock.now()
        self._deadline = now + budget
        self._recent = recent
        self._next_slot: dict[str, datetime] = (
            recent.next_slots(now, interval_for) if recent else {}
        )

    def acquire(self, channel: str) -> bool:
        """Wait for the channel's next slot and take it; False (without waiting) when that
        slot is beyond the pass's budget."""
        now = self._clock.now()
        slot = max(self._next_slot.get(channel, now), now)
        if slot > self._deadline:
            return False
        if slot > now:
            self._clock.sleep((slot - now).total_seconds())
        self._next_slot[channel] = slot + interval_for(channel)
        return True

    def hold(self, channel: str, until: datetime) -> None:
        """The channel may not be posted to before `until` (another worker's last post)."""
        self._next_slot[channel] = max(self._next_slot.get(channel, until), until)

    def ready_at(self, channel: str) -> datetime | None:
        """The channel's next slot, None if it has none yet (it may post now)."""
        return self._next_slot.get(channel)

    def answered(self, channel: str, at: datetime) -> None:
        """Slack answered a post in `channel` at `at` (later than its slot: the claim and
        the post took time): the next one keeps a full interval from then, so it reaches
        Slack at least an interval after this one, whatever the network did to either."""
        next_slot = at + interval_for(channel)
        self._next_slot[channel] = max(self._next_slot.get(channel, at), next_slot)
        if self._recent is not None:
            self._recent.note(channel, at)


# The longest a `deliver` delivery keeps its channel's ordering key by waiting itself after
# Slack answered; a longer wait (Slack's Retry-After) is handed back to Pub/Sub (ChannelWait:
# not acknowledged). A rate-limited post is waited out before this, up to `hold_limit`.
MAX_HOLD = timedelta(seconds=5)
# What a delivery keeps of its push's ack deadline besides a post's timeout: its finalize,
# its reads, and the second of pacing after the post.
PUSH_MARGIN = timedelta(seconds=10)


def hold_limit(settings: Settings) -> timedelta:
    """How long a `deliver` delivery may wait out Slack's Retry-After itself, and so keep its
    message unanswered (not nacked: Pub/Sub counts no delivery attempt) and its channel's
    later messages behind it: its push's ack deadline, less a post's timeout and a margin
    (40 s with the defaults)."""
    deadline = timedelta(seconds=ack_deadline_seconds(settings.slack_timeout_seconds))
    return deadline - timedelta(seconds=settings.slack_timeout_seconds) - PUSH_MARGIN


def rate_limit_wait(post: PostResult) -> timedelta | None:
    """How long Slack asked to wait before this post is tried again; None when it was not
    rate limited (delivered, failed, ambiguous, or released for another reason)."""
    if post.outcome is not Outcome.RETRY_LATER or post.code not in RATE_LIMITED:
        return None
    return timedelta(seconds=post.retry_after or DEFAULT_RETRY_AFTER)


def rate_limited_until(subject: dict[str, Any], now: datetime) -> datetime | None:
    """When a subject released for a Slack rate limit (`last_error` `ratelimited`) may be
    claimed again, if that is after `now`; None for any other subject."""
    due = subject.get(SubjectField.NEXT_RUN_AT)
    error = subject.get(SubjectField.LAST_ERROR)
    code = error.get(ErrorField.CODE) if isinstance(error, dict) else None
    if isinstance(due, datetime) and due > now and code in RATE_LIMITED:
        return due
    return None


class ChannelWait(Exception):
    """The channel may not be posted to before `until`, too far off to wait for in the
    delivery: it is not acknowledged, so Pub/Sub delivers it again later and, with ordering,
    keeps the channel's later messages behind it meanwhile."""

    def __init__(self, until: datetime) -> None:
        super().__init__(f"the channel is rate limited until {until.isoformat()}")
        self.until = until


def hold_channel(
    clock: Clock, answered: datetime, retry_after: int | None, interval: timedelta = POST_INTERVAL
) -> None:
    """Pacing under DISPATCH=pubsub: return once the channel may take its next post, an
    interval after Slack `answered` this one (or its Retry-After). Pub/Sub hands out a
    channel's next message (ordering key) only once this one is acknowledged, whichever
    instance takes it, so returning no sooner paces the channel across every instance.
    ChannelWait when that is more than MAX_HOLD away."""
    wait = max(interval, timedelta(seconds=retry_after or 0))
    until = answered + wait
    left = until - clock.now()
    if left > MAX_HOLD:
        raise ChannelWait(until)
    if left > timedelta(0):
        clock.sleep(left.total_seconds())
