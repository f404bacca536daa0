"""Scheduled messages as a kind of send (processor.abc.Kind): what their outcomes write and
how they are reported.

- Delivered: a one-off is `sent`; a series moves to its next occurrence (`recurring`) or ends
  `completed` (messages.advance).
- Failed: the message is `failed` with `last_error`.
- Not delivered (rate limited, proven absent): released, claimed again at `next_run_at`
  through the same ledger entry (`occurrence_at` keeps its identity).
- Ambiguous: the claim and its lease stay; reconciliation settles it once the lease expires.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from core.actions import to_document
from core.documents.deliveries import (
    LedgerField,
    LedgerKind,
    LedgerStatus,
    LedgerWrite,
    PinnedPost,
)
from core.documents.errors import StoredError
from core.documents.messages import MessageField, MessageWrite, Status
from core.documents.people import Holds
from core.documents.write import DELETE, INCREMENT, UNSET, Unset
from core.errors import DocumentError
from core.models import Message, message_delivery_id
from core.runtime import Runtime
from core.slack import DEFAULT_RETRY_AFTER, Outcome, PostResult
from core.store import MESSAGES, Snapshot, due_messages, expired_leases
from formatting.buttons import with_actions
from formatting.slack_text import SlackMessage, to_slack
from messages.advance import settled
from messages.settle import message_settle_writes
from processor.abc import (
    Claim,
    ClaimPlan,
    Doc,
    Leased,
    OutcomeLine,
    Settle,
    Writes,
)
from processor.gates import Gates, read_gates, settled_writes
from processor.outcome import Result
from processor.subject_lease import OutcomeWords, holds_lease, leased_occurrence, outcome_line

_WORDS = OutcomeWords(
    delivered="delivered",
    ambiguous="delivery outcome unknown; held for reconciliation",
    released="delivery not made; released for retry",
)
_DELIVERED = {
    Status.SENT: Result.SENT,
    Status.RECURRING: Result.ADVANCED,
    Status.COMPLETED: Result.COMPLETED,
}


class MessageKind:
    name = LedgerKind.MESSAGE
    collection = MESSAGES
    id_field = LedgerField.MESSAGE_ID
    noun = "a sending message"
    summary_key: str | None = None
    fences_subject = True

    def read_ahead(self, rt: Runtime, due: list[Snapshot]) -> Gates:
        """The gates' documents of the page's messages to people, in one batched read."""
        return read_gates(rt.db, [snap.to_dict() or {} for snap in due])

    def plan(
        self, rt: Runtime, snap: Snapshot, ahead: object = None
    ) -> ClaimPlan[Message] | Result:
        from messages.claim import plan_message  # it plans the claims of this kind

        return plan_message(rt, snap, ahead if isinstance(ahead, Gates) else None)

    def due(
        self, rt: Runtime, now: datetime, limit: int, excluding: Sequence[str] = ()
    ) -> list[Snapshot]:
        return due_messages(rt.db, now, limit, excluding=excluding, shards=rt.settings.shards)

    def preview(self, rt: Runtime, due: list[Snapshot], now: datetime) -> list[dict[str, Any]]:
        from messages.preview import preview_messages  # it reads claims' plans

        return preview_messages(rt, due, now)

    def sweep(self, rt: Runtime) -> Counter[str]:
        from messages.unusable_leases import fail_unusable_leases  # it rejects as a claim does

        return fail_unusable_leases(rt)

    def expired(self, db: Any, now: datetime, limit: int) -> list[Snapshot]:
        return expired_leases(db, now, limit)

    def leased(self, subject_id: str, data: dict[str, Any]) -> Leased:
        return leased_occurrence(
            self.noun,
            data,
            lambda: Message.from_document(subject_id, data),
            lambda occurrence: message_delivery_id(subject_id, occurrence),
        )

    def taken_over(
        self, subject_id: str, data: dict[str, Any], leased: Leased, entry: dict[str, Any]
    ) -> Message:
        # What its claim reserved for the person's gates, which this settlement records.
        holds = Holds.from_document(entry.get(LedgerField.GATES))
        message = replace(Message.from_document(subject_id, data), holds=holds)
        dm = entry.get(LedgerField.CHANNEL)
        if message.user is not None and isinstance(dm, str):
            # The DM the claim opened and posted to: its history is where the post would be.
            return message.to_dm(dm)
        return message

    def channel(self, claim: Claim[Message]) -> str:
        channel = claim.subject.channel
        if channel is None:  # a person's DM is opened before every claim; never here
            raise DocumentError("missing_channel", f"no DM channel for {claim.subject.user}")
        return channel

    def render(self, claim: Claim[Message]) -> SlackMessage:
        rendered = to_slack(claim.subject.text, allow_broadcast=claim.subject.allow_broadcast)
        return with_actions(rendered, claim.delivery_id, claim.subject.actions)

    def outcome_writes(
        self, claim: Claim[Message], post: PostResult, now: datetime, max_attempts: int
    ) -> Writes:
        writes = self._outcome_writes(claim, post, now)
        # What the claim reserved for the person's gates: given back, or kept.
        return writes._replace(
            others=settled_writes(claim.subject, claim.delivery_id, post.outcome)
        )

    def _outcome_writes(self, claim: Claim[Message], post: PostResult, now: datetime) -> Writes:
        error = StoredError(post.code, post.detail, now)
        if post.outcome is Outcome.DELIVERED:
            message = replace(
                settled(claim.subject, claim.occurrence_at),
                last_slack_ts=post.ts,
                last_sent_at=now,
                sent_count=INCREMENT,
                last_error=DELETE,
            )
            ledger = LedgerWrite(status=LedgerStatus.SENT, slack_ts=post.ts, sent_at=now)
            assert isinstance(message.status, Status)  # settling always sets one
            return Writes(message, ledger, _DELIVERED[message.status])
        if post.outcome is Outcome.FAILED:
            message = MessageWrite(status=Status.FAILED, lease=DELETE, last_error=error)
            ledger = LedgerWrite(status=LedgerStatus.FAILED, error=error)
            return Writes(message, ledger, Result.FAILED)
        if post.outcome is Outcome.RETRY_LATER:
            retry_at = now + timedelta(seconds=post.retry_after or DEFAULT_RETRY_AFTER)
            message = MessageWrite(
                status=Status.RECURRING if claim.subject.is_recurring else Status.PENDING,
                next_run_at=retry_at,
                # Keeps the retry on the same ledger entry although next_run_at moved.
                occurrence_at=claim.occurrence_at,
                lease=DELETE,
                last_error=error,
            )
            ledger = LedgerWrite(status=LedgerStatus.RELEASED, error=error, retry_at=retry_at)
            return Writes(message, ledger, Result.RELEASED)
        # Ambiguous: Slack may have posted it. Keep the claim (and its lease) so nobody
        # resends it blindly; reconciliation settles it once the lease has expired.
        return Writes(MessageWrite(last_error=error), LedgerWrite(error=error), Result.AMBIGUOUS)

    def unconfirmed_writes(self, claim: Claim[Message], error: StoredError) -> Writes:
        message = MessageWrite(status=Status.UNCONFIRMED, lease=DELETE, last_error=error)
        ledger = LedgerWrite(status=LedgerStatus.UNCONFIRMED, error=error)
        return Writes(message, ledger, Result.UNCONFIRMED)

    def settle_writes(self, rt: Runtime, action: Settle, entry: Doc, subject: Doc) -> Writes:
        return message_settle_writes(rt, self, action, entry, subject)

    def still_leased(self, claim: Claim[Message], subject: dict[str, Any]) -> bool:
        return holds_lease(claim, subject, subject.get(MessageField.STATUS), Status.SENDING)

    def log_fields(self, claim: Claim[Message]) -> dict[str, Any]:
        return {} if claim.subject.user is None else {"user": claim.subject.user}

    def outcome_line(self, claim: Claim[Message], post: PostResult, result: Result) -> OutcomeLine:
        return outcome_line(_WORDS, post, result)


def pinned_post(message: Message) -> LedgerWrite:
    """What the post `MessageKind.render` makes of `message` is, for its ledger entry's
    claim (LedgerField.ACTIONS): its buttons, its rendered text and blocks, and whose first
    answer wins. Nothing for a post without buttons: no click or update ever reads it."""
    if not message.actions:
        return LedgerWrite()
    return LedgerWrite(
        actions=to_document(message.actions), post=_rendered(message), one_answer=message.one_answer
    )


def _rendered(message: Message) -> PinnedPost | Unset:
    """The post's text and blocks before its buttons; none when the text cannot render (the
    send then fails on the same DocumentError, and there is no post to update)."""
    try:
        rendered = to_slack(message.text, allow_broadcast=message.allow_broadcast)
    except DocumentError:
        return UNSET
    return PinnedPost(rendered.text, rendered.blocks)


MESSAGE_KIND = MessageKind()
