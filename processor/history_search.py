"""Asking Slack's history whether a claimed occurrence went out, within Slack's limits.

- The window is the narrowest that can hold the post. A worker starts a post no later than
  its claim's `post_deadline`; Slack stamps it before the client's timeout ends; CLOCK_SKEW
  either side allows for Slack's clock and ours disagreeing. Nothing later can be it.
- The reading resumes where it stopped: the window, the cursor and the pages read are kept on
  the ledger entry (`search`), so a lease whose window is longer than one pass can read is
  settled over several passes, never restarted at the newest page.
- The history calls come from one budget per pass (HISTORY_CALLS_PER_PASS), shared by every
  lease the pass reconciles, each taking an even share of what is left, so one busy channel
  cannot spend the rest. A rate limit (429) ends the pass's reading; the process waits out
  its Retry-After before calling history again (core.slack: the transport's wait per method).
- Only our own posts prove a delivery: the message must carry our metadata event type and
  the delivery id, and have been posted by this token's bot (`auth.test`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from google.api_core.exceptions import FailedPrecondition
from google.cloud import firestore

from core.documents.deliveries import LedgerField, LedgerWrite, SearchField
from core.documents.leases import LeasePatch
from core.documents.subjects import SubjectWrite
from core.platform import PLATFORMS, Destination, Lookup, Outcome, PostResult, Witness
from core.runtime import Runtime
from core.settings import Settings
from processor.held import history_unreadable

# Slack's clock and ours may disagree a little; the window allows for it on both sides.
CLOCK_SKEW = timedelta(minutes=1)
# A worker starts its post at most this long after its claim (processor.deliver.send).
POST_START_LIMIT = timedelta(minutes=1)


def post_deadline(settings: Settings, claimed_at: datetime) -> datetime:
    """The latest a worker may start the post of a claim made at `claimed_at`: soon after
    the claim, and early enough that Slack answers (or the client gives up) before the lease
    ends. A post started later could land after reconciliation read the window."""
    lease = timedelta(seconds=settings.lease_seconds - settings.slack_timeout_seconds)
    return claimed_at + min(POST_START_LIMIT, lease)


def too_late_to_post(rt: Runtime, post_by: datetime | None) -> PostResult | None:
    """RETRY_LATER when the claim's post deadline has passed: nothing is sent, so the
    occurrence is released for another attempt rather than posted outside its window."""
    now = rt.clock.now()
    if post_by is None or now <= post_by:
        return None
    return PostResult(
        Outcome.RETRY_LATER,
        "post_deadline_passed",
        retry_after=0,
        detail=f"the post was not started by {post_by.isoformat()}; not sent, released",
    )


@dataclass(frozen=True)
class Search:
    """Where the reading of one occurrence's window stands (the ledger entry's `search`,
    all but `claimed_at`, which is the entry's own)."""

    claimed_at: datetime
    oldest: datetime
    latest: datetime
    cursor: str | None = None
    pages: int = 0

    @classmethod
    def of(cls, settings: Settings, entry: dict[str, Any], claimed_at: datetime) -> Search:
        """The stored search of a ledger entry, or a new one over the claim's window."""
        stored = entry.get(LedgerField.SEARCH)
        if isinstance(stored, dict):
            oldest, latest = stored.get(SearchField.OLDEST), stored.get(SearchField.LATEST)
            cursor, pages = stored.get(SearchField.CURSOR), stored.get(SearchField.PAGES)
            if isinstance(oldest, datetime) and isinstance(latest, datetime):
                return cls(
                    claimed_at,
                    oldest,
                    latest,
                    cursor if isinstance(cursor, str) and cursor else None,
                    pages if isinstance(pages, int) else 0,
                )
        timeout = timedelta(seconds=settings.slack_timeout_seconds)
        closes = post_deadline(settings, claimed_at) + timeout + CLOCK_SKEW
        return cls(claimed_at, claimed_at - CLOCK_SKEW, closes)

    def closed(self, now: datetime) -> bool:
        """Whether every post the window can hold has been answered (or given up on) by
        `now`, so that reading it can prove an absence."""
        return now >= self.latest - CLOCK_SKEW

    def to_document(self) -> dict[str, Any]:
        return {
            SearchField.OLDEST.value: self.oldest,
            SearchField.LATEST.value: self.latest,
            SearchField.CURSOR.value: self.cursor,
            SearchField.PAGES.value: self.pages,
        }


class HistoryBudget:
    """The history calls one pass may make, shared by every lease it reconciles; a
    platform that answered 429 is read no more this pass."""

    def __init__(self, calls: int, paused: dict[str, datetime] | None = None) -> None:
        self._calls = calls
        self._waiting = 0
        self._paused = dict(paused or {})

    @classmethod
    def for_pass(cls, rt: Runtime) -> HistoryBudget:
        """The pass's calls; none on a platform while the process waits out a history
        429's Retry-After there."""
        waits = {p: rt.platform(p).history_waiting_until() for p in PLATFORMS}
        paused = {p: until for p, until in waits.items() if until is not None}
        return cls(rt.settings.history_calls_per_pass, paused)

    def expect(self, leases: int) -> None:
        """`leases` more will ask for a share."""
        self._waiting += leases

    def share(self) -> int:
        """The calls the next lease may make: an even share of what is left among the
        leases still to come (at least one while any is left)."""
        waiting = max(self._waiting, 1)
        self._waiting = max(self._waiting - 1, 0)
        return min(self._calls, math.ceil(self._calls / waiting))

    def spend(self) -> None:
        self._calls -= 1

    def resume_at(self, platform: str) -> datetime | None:
        """When `platform`'s history may be read again, if it answered 429."""
        return self._paused.get(platform)

    def rate_limited(self, platform: str, until: datetime) -> None:
        """`platform` answered 429: no more history calls there this pass (the transport
        makes none before `until`)."""
        self._paused[platform] = until


def searchable(rt: Runtime, entry: dict[str, Any], fallback: datetime) -> Search | None:
    """The ledger entry's search (a new one over its claim's window; `fallback` stands in
    for a missing `claimed_at`), or None while a post may still be on its way into it."""
    claimed_at = entry.get(LedgerField.CLAIMED_AT)
    search = Search.of(
        rt.settings, entry, claimed_at if isinstance(claimed_at, datetime) else fallback
    )
    return search if search.closed(rt.clock.now()) else None


def ask_history(
    rt: Runtime,
    budget: HistoryBudget,
    calls: int,
    to: Destination,
    search: Search,
    fence: tuple[tuple[Any, Any], tuple[Any, Any]],
    **subject: Any,
) -> Lookup:
    """Read on in the window (`read_window`) for `subject["delivery_id"]`. When it is not
    settled, the search is kept for a later pass (`keep_searching`, under `fence`: the
    subject's and the ledger entry's references with the update times the take-over left),
    and a WARNING is logged, escalated an hour after the claim (processor.held)."""
    delivery_id = subject.pop("delivery_id")
    lookup, search = read_window(rt, budget, calls, to, delivery_id, search)
    if lookup.witness is not Witness.TRY_LATER:
        return lookup
    keep_searching(rt, fence[0], fence[1], search, budget.resume_at(to.platform) or rt.clock.now())
    history_unreadable(
        rt, delivery_id, search.claimed_at, lookup.code, history_pages=search.pages, **subject
    )
    return lookup


def read_window(
    rt: Runtime,
    budget: HistoryBudget,
    calls: int,
    to: Destination,
    delivery_id: str,
    search: Search,
) -> tuple[Lookup, Search]:
    """Read at most `calls` pages of the window from where `search` stopped: FOUND (our
    bot's post carrying `delivery_id`), ABSENT (the whole window read), UNREADABLE, or
    TRY_LATER with the search as it now stands, to be resumed by a later pass."""
    platform, channel = rt.to(to), to.conversation
    if budget.resume_at(to.platform) is not None:
        return Lookup(Witness.TRY_LATER, code="ratelimited"), search
    for _ in range(calls):
        budget.spend()
        page = platform.history_page(channel, search.oldest, search.latest, search.cursor)
        if page.error is not None:
            if page.error.code == "invalid_cursor":
                # The stored cursor is no longer good: read the window again from the top.
                search = replace(search, cursor=None, pages=0)
                continue
            return _failed(rt, budget, to.platform, page.error), search
        proof = platform.proof(channel, page.messages, delivery_id)
        if proof is not None:
            return proof, search  # an unreadable identity reads this page again next time
        search = replace(search, cursor=page.next_cursor, pages=search.pages + 1)
        if page.next_cursor is None:
            return Lookup(Witness.ABSENT), search
    return Lookup(Witness.TRY_LATER, code="history_unfinished"), search


def _failed(rt: Runtime, budget: HistoryBudget, platform: str, error: PostResult) -> Lookup:
    if error.outcome is Outcome.FAILED:
        return Lookup(Witness.UNREADABLE, code=error.code)
    if error.outcome is Outcome.RETRY_LATER:
        wait = error.retry_after or 1
        budget.rate_limited(platform, rt.clock.now() + timedelta(seconds=wait))
        return Lookup(Witness.TRY_LATER, code=error.code)
    return Lookup(Witness.TRY_LATER, code=error.code)


def keep_searching(
    rt: Runtime,
    subject: tuple[firestore.DocumentReference, Any],
    ledger: tuple[firestore.DocumentReference, Any],
    search: Search,
    resume_at: datetime,
) -> None:
    """Keep an unfinished search on the ledger entry and let the lease expire at
    `resume_at`, when a later pass goes on from there. Conditioned on the reconciler's own
    take-over (the update times it left on the subject and the ledger entry): if anyone
    wrote either since, they own it now, and nothing is written. A subject's version None:
    the ledger entry alone fences it (processor.abc.Kind.fences_subject)."""
    batch = rt.db.batch()
    fenced = subject[1] is not None
    batch.update(
        subject[0],
        SubjectWrite(lease=LeasePatch(expires_at=resume_at)).to_document(),
        option=rt.db.write_option(last_update_time=subject[1]) if fenced else None,
    )
    batch.update(
        ledger[0],
        LedgerWrite(search=search, lease_expires_at=resume_at).to_document(),
        option=rt.db.write_option(last_update_time=ledger[1]),
    )
    try:
        batch.commit()
    except FailedPrecondition:
        return
