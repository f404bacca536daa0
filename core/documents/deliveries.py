"""`deliveries/{delivery_id}`, the ledger: one entry per occurrence that was ever claimed (or
recorded as skipped), never two. Its statuses, field names and typed writes."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.documents.errors import StoredError
from core.documents.leases import Lease
from core.documents.write import UNSET, Unset, Write
from core.platform import SLACK, TEAMS


class LedgerStatus(enum.StrEnum):
    """`deliveries.status` values. `released` is our addition: the occurrence was not
    delivered (rate limited, or proven undelivered) and may be claimed again."""

    CLAIMED = "claimed"
    SENT = "sent"
    FAILED = "failed"
    SKIPPED = "skipped"
    UNCONFIRMED = "unconfirmed"
    RELEASED = "released"


# An entry in one of these may be claimed again (the same entry, attempts + 1).
RECLAIMABLE = (LedgerStatus.RELEASED, LedgerStatus.FAILED)


class LedgerReason(enum.StrEnum):
    """`deliveries.reason`: why a `skipped` entry was never sent."""

    MISSED = "missed"  # nothing ran while it was due
    DAY_ENDED = "day_ended"  # a rotation day given back, and its local day ended first
    EVERYONE_SKIPPED = "everyone_skipped"  # every member of a rotation was out that day
    CANCELLED = "cancelled"  # a released occurrence whose message was cancelled
    RESCHEDULED = "rescheduled"  # a released occurrence whose message was moved
    # A person's gates (processor.gates), in the order they run:
    OPTED_OUT = "opted_out"  # the person opted out of the message's category
    QUIET_WINDOW = "quiet_window"  # within the quiet window of another message to them
    DAILY_CAP = "daily_cap"  # the category's daily cap for them was reached that local day


class LedgerKind(enum.StrEnum):
    """`deliveries.kind`: what was sent."""

    MESSAGE = "message"
    ROTATION = "rotation"
    EVENT = "event"  # a notify-once event (`POST /events`)


class LedgerField(enum.StrEnum):
    KIND = "kind"
    MESSAGE_ID = "message_id"
    ROTATION_ID = "rotation_id"
    EVENT_ID = "event_id"  # an event's `events` id: the sha256 of its key
    OCCURRENCE_AT = "occurrence_at"
    OCCURRENCE_DATE = "occurrence_date"
    CHANNEL = "channel"
    USER = "user"  # a message to a person: their user id (`channel` is their DM)
    MEMBER = "member"
    STATUS = "status"
    REASON = "reason"
    WORKER = "worker"
    ATTEMPTS = "attempts"
    CLAIMED_AT = "claimed_at"
    LATE_SECONDS = "late_seconds"
    SLACK_TS = "slack_ts"
    # A Teams delivery's: `platform` "teams" (absent: Slack), its conversation in `channel`,
    # and the activity id Teams returned in place of `slack_ts`.
    PLATFORM = "platform"
    ACTIVITY_ID = "activity_id"
    SENT_AT = "sent_at"
    ERROR = "error"
    RETRY_AT = "retry_at"
    SKIPPED_AT = "skipped_at"
    MISSED_COUNT = "missed_count"
    MISSED_THROUGH = "missed_through"
    ESCALATED_AT = "escalated_at"
    HISTORY_ESCALATED_AT = "history_escalated_at"
    LEASE_EXPIRES_AT = "lease_expires_at"
    RECONCILED_AT = "reconciled_at"
    SEARCH = "search"
    OPERATOR = "operator"
    GATES = "gates"  # what the claim reserved on the person's document (core.documents.people)
    # What a post with buttons was, pinned by its claim (every claim of the entry, so a
    # retry pins what it posts) for its clicks and updates, whatever edits come later:
    # the catalog (core.actions, stored as a subject's `actions`) a click is checked, and
    # its answer labelled, by; the rendered post (`PinnedPost`) its updates show; a rotation
    # day's template and the `render_version` that rendered it, to name another member after
    # a skip; and a message's `one_answer`, which decides whose first answer wins. A post
    # without buttons pins none.
    ACTIONS = "actions"
    POST = "post"
    TEXT = "text"  # a rotation day's template
    RENDER_VERSION = "render_version"
    ONE_ANSWER = "one_answer"
    # The category a post's reserved `mute_category` button mutes (core.actions), as the
    # message named it at the send.
    MUTE_CATEGORY = "mute_category"


class PostField(enum.StrEnum):
    """`deliveries.post`: the post as sent, before its buttons: Slack's text and blocks, or
    Teams' fallback text and Adaptive Card."""

    TEXT = "text"
    BLOCKS = "blocks"
    MEMBER = "member"  # a rotation day's: whom the post named
    CARD = "card"  # a Teams post's Adaptive Card (its mentions inside it)


@dataclass(frozen=True)
class PinnedPost:
    """What a post with buttons showed (its mrkdwn text and section blocks, the buttons left
    out: an update adds them with the answers), and for a rotation day, whom it named."""

    text: str
    blocks: list[dict[str, Any]] | None
    member: str | None = None
    card: dict[str, Any] | None = None

    def to_document(self) -> dict[str, Any]:
        document: dict[str, Any] = {PostField.TEXT.value: self.text}
        if self.blocks is not None:
            document[PostField.BLOCKS.value] = self.blocks
        if self.member is not None:
            document[PostField.MEMBER.value] = self.member
        if self.card is not None:
            document[PostField.CARD.value] = self.card
        return document

    @classmethod
    def from_document(cls, value: Any) -> PinnedPost | None:
        """The pinned post, or None when there is none (or it is not one's shape)."""
        if not isinstance(value, dict):
            return None
        text, blocks, member, card = (value.get(field) for field in PostField)
        if not isinstance(text, str) or not isinstance(member, str | None):
            return None
        if card is not None and not isinstance(card, dict):
            return None
        if blocks is not None and not (
            isinstance(blocks, list) and all(isinstance(block, dict) for block in blocks)
        ):
            return None
        return cls(text, blocks, member, card)


class SearchField(enum.StrEnum):
    """`deliveries.search`: how far reconciliation has read the channel's history
    (processor.history_search.Search)."""

    OLDEST = "oldest"
    LATEST = "latest"
    CURSOR = "cursor"
    PAGES = "pages"


@dataclass(frozen=True, kw_only=True)
class LedgerWrite(Write):
    """Some fields of a ledger entry (an update, or with `new_entry` its first write)."""

    status: LedgerStatus | Unset = UNSET
    reason: LedgerReason | Unset = UNSET
    channel: str | Unset = UNSET  # where a claim posts (a person's DM, opened at the claim)
    worker: str | Unset = UNSET
    attempts: int | Unset = UNSET
    claimed_at: datetime | Unset | None = UNSET
    late_seconds: float | Unset = UNSET
    slack_ts: str | Unset | None = UNSET
    activity_id: str | Unset | None = UNSET
    sent_at: datetime | Unset | None = UNSET
    error: StoredError | Unset | None = UNSET
    retry_at: datetime | Unset = UNSET
    skipped_at: datetime | Unset | None = UNSET
    missed_count: int | Unset = UNSET
    missed_through: datetime | Unset = UNSET
    member: str | Unset | None = UNSET
    escalated_at: datetime | Unset | None = UNSET
    history_escalated_at: datetime | Unset = UNSET
    lease_expires_at: datetime | Unset = UNSET
    reconciled_at: datetime | Unset = UNSET
    search: Any = UNSET  # processor.history_search.Search: how far history was read
    operator: OperatorRecord | Unset = UNSET
    gates: dict[str, Any] | Unset = UNSET  # core.documents.people.Holds.to_document()
    actions: list[dict[str, Any]] | Unset = UNSET  # core.actions.to_document()
    post: PinnedPost | Unset = UNSET
    text: str | Unset = UNSET
    render_version: int | Unset = UNSET
    one_answer: bool | Unset = UNSET
    mute_category: str | Unset = UNSET


@dataclass(frozen=True)
class OperatorRecord:
    """`deliveries.operator`: which operator action settled the entry, why, who, when."""

    action: str
    reason: str
    by: str
    at: datetime

    def to_document(self) -> dict[str, Any]:
        return {"action": self.action, "reason": self.reason, "by": self.by, "at": self.at}


@dataclass(frozen=True)
class Occurrence:
    """What identifies an entry: its kind, its subject (`id_field`: `message_id`...),
    occurrence, channel (for a send to a person, their `user` and the DM channel the claim
    opened; None until one did)."""

    kind: str  # a LedgerKind, for the kinds in core
    id_field: str  # a LedgerField, for the kinds in core
    subject_id: str
    occurrence_at: datetime
    channel: str | None
    occurrence_date: str | None = None  # a rotation day's local date
    user: str | None = None
    platform: str = SLACK

    def to_document(self) -> dict[str, Any]:
        subject: dict[str, Any] = {self.id_field: self.subject_id}
        if self.occurrence_date is not None:
            subject[LedgerField.OCCURRENCE_DATE.value] = self.occurrence_date
        person = {} if self.user is None else {LedgerField.USER.value: self.user}
        if self.platform != SLACK:
            person[LedgerField.PLATFORM.value] = self.platform
        return {
            LedgerField.KIND.value: str(self.kind),
            **subject,
            LedgerField.OCCURRENCE_AT.value: self.occurrence_at,
            LedgerField.CHANNEL.value: self.channel,
            **person,
        }


def new_entry(occurrence: Occurrence, worker: str, write: LedgerWrite) -> dict[str, Any]:
    """A ledger document as first written, whatever its first status: one shape for every
    entry of a kind, so a listing or an operator never meets a field missing on some."""
    empty = LedgerWrite(worker=worker, attempts=0, slack_ts=None, sent_at=None, error=None)
    if occurrence.occurrence_date is None:
        unset = LedgerWrite(claimed_at=None)
    else:  # a rotation day's
        unset = LedgerWrite(member=None)
    return (
        occurrence.to_document() | empty.to_document() | unset.to_document() | write.to_document()
    )


def sent_write(platform: str, post_id: str | None, now: datetime) -> LedgerWrite:
    """A delivered entry's write: `sent`, and the post's id as its platform names it."""
    if platform == TEAMS:
        return LedgerWrite(status=LedgerStatus.SENT, activity_id=post_id, sent_at=now)
    return LedgerWrite(status=LedgerStatus.SENT, slack_ts=post_id, sent_at=now)


def entry_post(entry: dict[str, Any]) -> tuple[str, Any, Any]:
    """A ledger entry's platform, conversation and post id (None where it has none)."""
    platform = entry.get(LedgerField.PLATFORM) or SLACK
    post_id = entry.get(LedgerField.ACTIVITY_ID if platform == TEAMS else LedgerField.SLACK_TS)
    return platform, entry.get(LedgerField.CHANNEL), post_id


def entry_lease(entry: dict[str, Any], occurrence_at: datetime) -> Lease:
    """The lease a `claimed` ledger entry names (its worker and lease end), for a subject
    repaired from it."""
    return Lease(
        entry.get(LedgerField.WORKER), entry.get(LedgerField.LEASE_EXPIRES_AT), occurrence_at
    )
