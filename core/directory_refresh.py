"""Refreshing the directory cache (core.documents.directory) from Slack's
`conversations.list` and `users.list`, a bounded step at a time.

- A list is refreshed once its last full refresh is older than DIRECTORY_MAX_AGE_SECONDS
  (or it never had one), and goes on from its stored cursor until Slack's `next_cursor` is
  empty; then the entries the refresh did not see (archived or removed channels, deactivated
  or deleted people, bots) are deleted.
- Never more than one refresh of a list in flight: a step first takes the list's lease on its
  refresh-state document, a write conditioned on the version it read (a concurrent taker
  fails the precondition and goes away), and every page's write is conditioned on the
  version the step itself last wrote, so a step that lost its lease stops.
- Within Slack's tiers (both methods are Tier 2, 20+ calls a minute): at most
  DIRECTORY_PAGES_PER_MINUTE pages a minute per list, counted in the refresh state across
  workers. A 429 stores its Retry-After: no call before it, and the next step resumes from the
  stored cursor. Nothing here sleeps.

Who steps: the `tick` (targets/tick.py), each pass, one step per list; and a directory read
that finds a list never refreshed takes one page itself so a fresh deployment's picker is
never empty (composer/directory.py).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from google.api_core.exceptions import AlreadyExists, FailedPrecondition
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from core import logs
from core.clock import Clock
from core.documents.directory import (
    ChannelField,
    ChannelWrite,
    DirectoryList,
    RefreshState,
    RefreshWrite,
    UserField,
    UserWrite,
)
from core.documents.write import DELETE, UNSET, write_as_read
from core.models import CHANNEL_ID, USER_ID
from core.platform import PostResult
from core.settings import REAL_SLACK_API, Settings
from core.slack import RATE_LIMITED, classify_api_error, classify_exception, web_client
from core.store import DIRECTORY_CHANNELS, DIRECTORY_REFRESH, DIRECTORY_USERS

PAGE_SIZE = 200  # Slack's advice for both lists ("no more than 200 results at a time")
WINDOW = timedelta(minutes=1)
_SWEEP_BATCH = 400
_COLLECTION = {
    DirectoryList.CHANNELS: DIRECTORY_CHANNELS,
    DirectoryList.USERS: DIRECTORY_USERS,
}


@dataclass(frozen=True)
class Step:
    """What one step did: `reason` is fresh, waiting (a 429's Retry-After), busy (another
    worker's refresh), budget (this minute's pages taken), paused (pages left for the next
    step), done (the list was read to its end) or failed (`code`)."""

    list: DirectoryList
    reason: str
    pages: int = 0
    code: str | None = None


@dataclass(frozen=True)
class Page:
    entries: list[dict[str, Any]]
    next_cursor: str | None


Reader = Callable[[DirectoryList, str | None], Page | PostResult]


@functools.lru_cache(maxsize=4)
def _client(settings: Settings) -> WebClient:
    """The one client (and TLS context) of the process for the directory's calls."""
    token = settings.slack_bot_token or "xoxb-local-stand-in"
    return web_client(token, settings.slack_api_url, settings.slack_timeout_seconds)


@functools.lru_cache(maxsize=4)
def slack_reader(settings: Settings, page_size: int = PAGE_SIZE) -> Reader:
    """One page of a list through slack_sdk, or what went wrong (a 429 with Retry-After).
    No retry handler: a failed page is the next step's to take, never slept on here."""
    client = _client(settings)

    def read(which: DirectoryList, cursor: str | None) -> Page | PostResult:
        try:
            if which is DirectoryList.CHANNELS:
                answer = client.conversations_list(
                    types="public_channel,private_channel",
                    exclude_archived=True,
                    limit=page_size,
                    cursor=cursor,
                )
                entries = answer.get("channels") or []
            else:
                answer = client.users_list(limit=page_size, cursor=cursor)
                entries = answer.get("members") or []
        except SlackApiError as exc:
            r = exc.response
            return classify_api_error(r.status_code, r.data, dict(r.headers))
        except Exception as exc:  # a read: whatever it was, the next step tries again
            return classify_exception(exc)
        next_cursor = (answer.get("response_metadata") or {}).get("next_cursor")
        return Page(
            [e for e in entries if isinstance(e, dict)],
            next_cursor if isinstance(next_cursor, str) and next_cursor else None,
        )

    return read


def refresh_step(
    db: firestore.Client,
    read: Reader,
    clock: Clock,
    settings: Settings,
    owner: str,
    which: DirectoryList,
    max_pages: int | None = None,
) -> Step:
    """At most `max_pages` pages (default: the minute's budget) of `which`, if it is due."""
    ref = db.collection(DIRECTORY_REFRESH).document(which.value)
    snap = ref.get()  # pragma: SYNCPOINT directory_refresh
    state = RefreshState.from_document(snap.to_dict() if snap.exists else None)
    now = clock.now()
    blocked = _blocked(state, settings, owner, now)
    if blocked is not None:
        return Step(which, blocked)
    fresh_window = state.window_start is None or now - state.window_start >= WINDOW
    used = 0 if fresh_window else state.window_pages
    allowed = settings.directory_pages_per_minute - used
    if max_pages is not None:
        allowed = min(allowed, max_pages)
    if allowed <= 0:
        return Step(which, "budget")
    starting = state.cursor is None
    generation = state.generation + 1 if starting else state.generation
    take = RefreshWrite(
        generation=generation,
        started_at=now if starting else UNSET,
        lease_owner=owner,
        lease_expires_at=now + timedelta(seconds=settings.lease_seconds),
        window_start=now if fresh_window else UNSET,
        window_pages=used,
        updated_at=now,
    )
    batch = db.batch()
    write_as_read(batch, ref, take.to_document(), snap.update_time if snap.exists else None)
    try:
        results = batch.commit()  # pragma: SYNCPOINT directory_refresh
    except (AlreadyExists, FailedPrecondition):
        return Step(which, "busy")
    run = _Run(db, ref, read, clock, which, generation, results[-1].update_time)
    return run.pages(state.cursor, used, allowed)


def start_if_never(
    db: firestore.Client, clock: Clock, settings: Settings, owner: str, which: DirectoryList
) -> None:
    """One page of a list that was never refreshed (no refresh state yet), so the first
    directory read of a fresh deployment is not empty; nothing otherwise."""
    if not _has_slack(settings) or db.collection(DIRECTORY_REFRESH).document(which).get().exists:
        return
    try:
        refresh_step(db, slack_reader(settings), clock, settings, owner, which, max_pages=1)
    except Exception as exc:  # the read answers from the cache as it is
        logs.error(
            "directory refresh failed",
            directory=which.value,
            error_code=type(exc).__name__,
            error_message=str(exc),
        )


def lookup_by_email(settings: Settings, email: str) -> dict[str, Any] | None:
    """Slack's person with this email (`users.lookupByEmail`, users:read.email), None when
    Slack knows none or cannot say now (the failure is logged)."""
    if not _has_slack(settings):
        return None
    try:
        user = _client(settings).users_lookupByEmail(email=email).get("user")
    except SlackApiError as exc:
        r = exc.response
        failure = classify_api_error(r.status_code, r.data, dict(r.headers))
        if failure.code != "users_not_found":
            logs.warning("users.lookupByEmail failed", error_code=failure.code)
        return None
    except Exception as exc:
        logs.warning("users.lookupByEmail failed", error_code=type(exc).__name__)
        return None
    return user if isinstance(user, dict) and user.get("deleted") is not True else None


def refresh_lists(db: firestore.Client, clock: Clock, settings: Settings, owner: str) -> list[Step]:
    """One step of each list (the tick's, once a pass); a step that raises is logged and the
    other list still steps. Nothing when this deployment has no Slack (Teams only)."""
    if not _has_slack(settings):
        return []
    steps = []
    for which in DirectoryList:
        try:
            steps.append(refresh_step(db, slack_reader(settings), clock, settings, owner, which))
        except Exception as exc:  # the directory never fails a pass
            logs.error(
                "directory refresh failed",
                directory=which.value,
                error_code=type(exc).__name__,
                error_message=str(exc),
            )
    return steps


def _has_slack(settings: Settings) -> bool:
    """Whether this deployment talks to Slack (a Teams-only one has no token for it)."""
    return settings.slack_bot_token is not None or settings.slack_api_url != REAL_SLACK_API


def _blocked(state: RefreshState, settings: Settings, owner: str, now: datetime) -> str | None:
    """Why no page may be taken now, None if one may."""
    if state.cursor is None and state.completed_at is not None:
        age = now - state.completed_at
        if age < timedelta(seconds=settings.directory_max_age_seconds):
            return "fresh"
    if state.wait_until is not None and state.wait_until > now:
        return "waiting"
    held = state.lease_expires_at is not None and state.lease_expires_at > now
    if held and state.lease_owner not in (None, owner):
        return "busy"
    return None


@dataclass
class _Run:
    """A step that holds the lease: its pages, each written under the version it wrote last."""

    db: firestore.Client
    ref: firestore.DocumentReference
    read: Reader
    clock: Clock
    which: DirectoryList
    generation: int
    version: Any

    def pages(self, cursor: str | None, used: int, allowed: int) -> Step:
        for taken in range(allowed):
            page = self.read(self.which, cursor)
            if isinstance(page, PostResult):
                return self._failed(page, taken)
            if not self._store(page, used + taken + 1):
                return Step(self.which, "busy", taken)
            cursor = page.next_cursor
            if cursor is None:
                self._sweep()
                self._finish(RefreshWrite(completed_at=self.clock.now()))
                return Step(self.which, "done", taken + 1)
        self._finish(RefreshWrite())
        return Step(self.which, "paused", allowed)

    def _store(self, page: Page, window_pages: int) -> bool:
        now = self.clock.now()
        batch = self.db.batch()
        collection = self.db.collection(_COLLECTION[self.which])
        for ident, entry in _entries(self.which, page.entries, self.generation, now):
            batch.set(collection.document(ident), entry.to_document())
        state = RefreshWrite(
            cursor=page.next_cursor or DELETE,
            window_pages=window_pages,
            last_error=DELETE,
            updated_at=now,
        )
        option = firestore.Client.write_option(last_update_time=self.version)
        batch.update(self.ref, state.to_document(), option=option)
        try:
            results = batch.commit()  # pragma: SYNCPOINT directory_refresh
        except FailedPrecondition:
            return False  # the lease was lost (expired and taken): that worker goes on
        self.version = results[-1].update_time
        return True

    def _sweep(self) -> None:
        """Deletes the entries this refresh did not see."""
        collection = self.db.collection(_COLLECTION[self.which])
        field = (
            ChannelField.GENERATION
            if self.which is DirectoryList.CHANNELS
            else UserField.GENERATION
        )
        stale = FieldFilter(field.value, "<", self.generation)
        while True:
            refs = [
                s.reference for s in collection.where(filter=stale).limit(_SWEEP_BATCH).stream()
            ]
            if not refs:
                return
            batch = self.db.batch()
            for ref in refs:
                batch.delete(ref)
            batch.commit()

    def _failed(self, failure: PostResult, taken: int) -> Step:
        now = self.clock.now()
        wait = None
        if failure.code in RATE_LIMITED:
            wait = now + timedelta(seconds=failure.retry_after or 1)
        self._finish(RefreshWrite(last_error=failure.code or "unknown", wait_until=wait or DELETE))
        logs.warning(
            "directory refresh page failed",
            directory=self.which.value,
            error_code=failure.code,
            retry_after=failure.retry_after,
        )
        reason = "waiting" if wait is not None else "failed"
        return Step(self.which, reason, taken, failure.code)

    def _finish(self, fields: RefreshWrite) -> None:
        """Gives the lease back (the cursor stays: the next step resumes from it)."""
        release = RefreshWrite(
            lease_owner=DELETE, lease_expires_at=DELETE, updated_at=self.clock.now()
        )
        option = firestore.Client.write_option(last_update_time=self.version)
        # A failed precondition: another worker took the expired lease and holds the state.
        with contextlib.suppress(FailedPrecondition):
            self.ref.update(fields.to_document() | release.to_document(), option=option)


def _entries(
    which: DirectoryList, raw: list[dict[str, Any]], generation: int, now: datetime
) -> list[tuple[str, ChannelWrite | UserWrite]]:
    if which is DirectoryList.CHANNELS:
        return [c for e in raw if (c := _channel(e, generation, now)) is not None]
    return [u for e in raw if (u := _user(e, generation, now)) is not None]


def _channel(e: dict[str, Any], generation: int, now: datetime) -> tuple[str, ChannelWrite] | None:
    ident, name = e.get("id"), e.get("name")
    if not isinstance(ident, str) or not CHANNEL_ID.match(ident) or not isinstance(name, str):
        return None
    if e.get("is_archived") is True or not name:
        return None
    write = ChannelWrite(
        name=name,
        sort_key=name.casefold(),
        is_private=e.get("is_private") is True,
        is_member=e.get("is_member") is True,
        generation=generation,
        updated_at=now,
    )
    return ident, write


def _user(e: dict[str, Any], generation: int, now: datetime) -> tuple[str, UserWrite] | None:
    ident, name = e.get("id"), e.get("name")
    if not isinstance(ident, str) or not USER_ID.match(ident) or not isinstance(name, str):
        return None
    # Deactivated people and bots (Slackbot included) are no one to schedule for.
    if e.get("deleted") is True or e.get("is_bot") is True or ident == "USLACKBOT" or not name:
        return None
    raw_profile = e.get("profile")
    profile: dict[str, Any] = raw_profile if isinstance(raw_profile, dict) else {}
    real = e.get("real_name") or profile.get("real_name")
    real_name = real if isinstance(real, str) else ""
    email = profile.get("email")
    write = UserWrite(
        name=name,
        real_name=real_name,
        sort_key=(real_name or name).casefold(),
        generation=generation,
        updated_at=now,
        email=email.lower() if isinstance(email, str) and email else UNSET,
    )
    return ident, write
