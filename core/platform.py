"""A chat platform, as the pipeline sees it: where a claim posts (Slack or Microsoft Teams),
and the words every platform's answers are classified into.

`Outcome` is what one post means for an occurrence, whatever the platform:
- DELIVERED: the platform accepted it (we have its post id: Slack's `ts`, Teams' activity id).
- FAILED: refused, and it will be refused again; never retried by itself.
- RETRY_LATER: provably not delivered and worth another try later (429, or the connection
  never opened).
- AMBIGUOUS: it may or may not have been posted (timeout, dropped connection, 5xx): never
  resent blindly; the occurrence stays claimed under its lease until reconciliation settles
  it by reading the conversation (`Platform.history_page`, `Platform.proof`).

Each platform keeps its own table from its own documentation (core.slack.OUTCOMES,
core.teams_outcomes). The kinds, the gates and the pipeline never ask which platform a claim
is on: they hand its `Destination` to `Runtime.platform`.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple, Protocol

DEFAULT_RETRY_AFTER = 60

SLACK, TEAMS = "slack", "teams"
PLATFORMS = (SLACK, TEAMS)


class Outcome(enum.Enum):
    DELIVERED = "delivered"
    FAILED = "failed"
    RETRY_LATER = "retry_later"
    AMBIGUOUS = "ambiguous"


@dataclass(frozen=True)
class PostResult:
    outcome: Outcome
    code: str | None = None
    ts: str | None = None  # the post's id on its platform (Slack `ts`, Teams activity id)
    retry_after: int | None = None
    detail: str = ""


class Witness(enum.Enum):
    """What a conversation's own history says about one delivery_id."""

    FOUND = "found"  # our bot's post carrying the delivery_id is in the conversation
    ABSENT = "absent"  # the whole window was read and it is not there
    UNREADABLE = "unreadable"  # history cannot be read (scope, permission, membership, auth)
    TRY_LATER = "try_later"  # not settled yet (rate limit, 5xx, pages left): ask again


@dataclass(frozen=True)
class Lookup:
    witness: Witness
    ts: str | None = None
    code: str | None = None


@dataclass(frozen=True)
class HistoryPage:
    """One page of a conversation's history, newest first; `error` when the call failed."""

    messages: tuple[dict[str, Any], ...] = ()
    next_cursor: str | None = None  # None: this was the last page of the window
    error: PostResult | None = None


class Destination(NamedTuple):
    """Where a claim posts: a platform, and a conversation on it (a Slack channel or DM id,
    a Teams conversation id)."""

    platform: str
    conversation: str


def posted_fields(to: Destination, post_id: str | None) -> dict[str, Any]:
    """Where a post went and its id, as a log line names them on its platform."""
    if to.platform == TEAMS:
        return {"teams_conversation": to.conversation, "activity_id": post_id}
    return {"channel": to.conversation, "slack_ts": post_id}


class Platform(Protocol):
    """One chat platform's transport: send, update, and read back for proof. Every method
    answers what happened (a PostResult, a HistoryPage); none raises for the platform's
    refusals."""

    @property
    def name(self) -> str: ...

    def send(self, conversation: str, message: Any, delivery_id: str) -> PostResult:
        """Post `message` (as this platform renders it) carrying `delivery_id`."""
        ...

    def edit(self, conversation: str, post_id: str, message: Any, delivery_id: str) -> PostResult:
        """Update our post `post_id` in place; DELIVERED when the platform took it."""
        ...

    def send_waiting_until(self, conversation: str) -> datetime | None:
        """When a post to `conversation` may be made again after a 429 (None: now)."""
        ...

    def edit_waiting_until(self) -> datetime | None:
        """When an update may be made again after a 429 (None: now)."""
        ...

    def history_waiting_until(self) -> datetime | None:
        """When the history may be read again after a 429 (None: now)."""
        ...

    def history_page(
        self, conversation: str, oldest: datetime, latest: datetime, cursor: str | None
    ) -> HistoryPage:
        """One page of the conversation between `oldest` and `latest`, from `cursor`."""
        ...

    def proof(
        self, conversation: str, messages: Sequence[dict[str, Any]], delivery_id: str
    ) -> Lookup | None:
        """FOUND (with the post id) when one of `messages` is our bot's post carrying
        `delivery_id`; an unsettled lookup when that cannot be told now; None otherwise."""
        ...
