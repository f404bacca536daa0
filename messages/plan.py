"""The claim of one occurrence of a message (processor.abc.ClaimPlan), and what its ledger
entry pins of the post: planned by messages.claim, committed by processor.claim."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from google.cloud import firestore

from core.actions import MUTE_CATEGORY, RESERVED, find, mute_action, to_document
from core.documents.categories import CategoryField
from core.documents.deliveries import (
    LedgerField,
    LedgerStatus,
    LedgerWrite,
    PinnedPost,
    entry_lease,
)
from core.documents.leases import Lease
from core.documents.messages import MessageWrite, Status
from core.documents.write import UNSET, Unset
from core.errors import DocumentError
from core.models import Message, message_delivery_id
from core.named_batch import Landed, NamedBatch
from core.runtime import Runtime
from core.store import DELIVERIES
from formatting.render import pinned, render, with_actions
from messages.advance import settled, stored_anchor
from messages.ledger import message_entry
from messages.missed import counted, log_missed
from processor.abc import Missed
from processor.gates import Reservation


@dataclass(frozen=True)
class MessagePlan:
    """The claim of one occurrence of a message (processor.claim.ClaimPlan)."""

    message: Message
    occurrence_at: datetime
    ledger_ref: firestore.DocumentReference
    missed: Sequence[Missed]
    worker_id: str
    # The person's gates' write (processor.gates.Reservation): their `people` document as
    # read, and its fields as the claim leaves them; written in the claim's (or the gated
    # skip's) own batch, under the version read.
    reservation: Reservation | None = None

    @classmethod
    def of(
        cls, rt: Runtime, message: Message, occurrence: datetime, missed: Sequence[Missed] = ()
    ) -> MessagePlan:
        ref = rt.db.collection(DELIVERIES).document(message_delivery_id(message.id, occurrence))
        return cls(message, occurrence, ref, missed, rt.worker_id)

    def new_entry(self) -> dict[str, Any]:
        return message_entry(self.message, self.occurrence_at, self.worker_id, LedgerWrite())

    def claim_fields(self) -> LedgerWrite:
        # Where this claim posts: a person's DM is (re)named on every claim of the entry;
        # what it reserved for the person's gates, for its finalize or reconciliation; and
        # what the post is, for its clicks and updates (pinned_post).
        holds = self.message.holds
        return replace(
            pinned_post(self.message),
            channel=self.message.channel or UNSET,
            gates=holds.to_document() if holds else UNSET,
        )

    def claimed(
        self, owner: str, expires_at: datetime, attempts: int, missed: Sequence[Missed]
    ) -> MessageWrite:
        return MessageWrite(
            status=Status.SENDING,
            lease=Lease(owner, expires_at, self.occurrence_at),
            attempts=attempts,
            missed_count=counted(missed),
            anchor=stored_anchor(self.message),
        )

    def repaired(
        self, entry: dict[str, Any], now: datetime, missed: Sequence[Missed]
    ) -> MessageWrite:
        status = entry.get(LedgerField.STATUS)
        if status == LedgerStatus.CLAIMED:
            lease = entry_lease(entry, self.occurrence_at)
            update = MessageWrite(status=Status.SENDING, lease=lease)
        elif status == LedgerStatus.UNCONFIRMED:
            update = MessageWrite(status=Status.UNCONFIRMED)
        else:  # sent or skipped: that occurrence is done, move past it
            update = settled(self.message, self.occurrence_at)
        return replace(update, missed_count=counted(missed))

    def subject(self, entry: dict[str, Any] | None) -> Message:
        return self.message

    def alongside(self, batch: NamedBatch) -> None:
        if self.reservation is not None:  # last in the batch (see landed)
            self.reservation.write(batch)

    def landed(self, landed: Landed) -> None:
        if self.reservation is not None:
            self.reservation.landed(landed)

    def log(self, missed: Sequence[Missed]) -> None:
        log_missed(self.message, missed)

    def log_fields(self) -> dict[str, Any]:
        return {LedgerField.OCCURRENCE_AT.value: self.occurrence_at}


def pinned_post(message: Message) -> LedgerWrite:
    """What the post (messages.kind's render) made of `message` is, for its ledger entry's
    claim (LedgerField.ACTIONS): its buttons, its rendered text and blocks, and whose first
    answer wins. Nothing for a post without buttons: no click or update ever reads it."""
    if not message.actions:
        return LedgerWrite()
    muted = message.category if find(message.actions, MUTE_CATEGORY) else None
    return LedgerWrite(
        actions=to_document(message.actions),
        post=_rendered(message),
        one_answer=message.one_answer,
        mute_category=muted or UNSET,
    )


def with_mute(message: Message, category: Mapping[str, Any] | None) -> Message:
    """`message` with the reserved mute button after its own (core.actions.mute_action) when
    it goes to a person (a Slack DM, a Teams personal chat) and its category, as this claim
    read it, lets them opt out (`opt_out_allowed` true or absent; anything else is read as
    must-read), and the post can carry buttons (Slack's blocks, Teams' card size; else it
    goes without). Its label and the category it mutes are pinned by the claim
    (pinned_post), whatever edits come later."""
    if message.user is None or message.category is None:
        return message
    if any(action.id in RESERVED for action in message.actions):
        return message  # stored by hand with a reserved id (the API refuses it): no second
    if not category or category.get(CategoryField.OPT_OUT_ALLOWED, True) is not True:
        return message
    label = category.get(CategoryField.LABEL)
    named = label if isinstance(label, str) and label.strip() else message.category
    actions = (*message.actions, mute_action(named))
    try:  # a post that cannot carry buttons (too long for them) goes without
        rendered = render(message.platform, message.text, allow_broadcast=message.allow_broadcast)
        with_actions(rendered, "", actions)
    except DocumentError:
        return message
    return replace(message, actions=actions)


def _rendered(message: Message) -> PinnedPost | Unset:
    """The post's text and blocks before its buttons; none when the text cannot render (the
    send then fails on the same DocumentError, and there is no post to update)."""
    try:
        rendered = render(message.platform, message.text, allow_broadcast=message.allow_broadcast)
    except DocumentError:
        return UNSET
    return pinned(rendered)
