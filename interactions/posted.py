"""The post a click names: its ledger entry, what it was sent for (a message, or a
rotation's day) and what the post was: its catalog of buttons, its rendered text and
blocks (with, for a rotation day, its template and render version), and whose first answer
wins.

All of it is what the entry's claim pinned (`deliveries.actions`, `post`, `text`,
`render_version`, `one_answer`; core.documents.deliveries), so an edit of the subject after
the send, or a formatter deployed since, neither changes which actions the post takes, how
its answers are labelled or who may still answer, nor rewrites the post when it is updated
to show them. Every claim of a post with buttons pins them all: an entry without a
catalog is no post with buttons, and nothing of the subject as it is now is read in their
place."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.actions import Action, pinned_catalog
from core.documents.deliveries import LedgerField, LedgerKind, PinnedPost, entry_post
from core.errors import DocumentError
from core.runtime import Runtime
from core.store import DELIVERIES, MESSAGES, ROTATIONS, Snapshot, is_document_id


@dataclass(frozen=True)
class Posted:
    kind: LedgerKind  # MESSAGE or ROTATION
    subject_id: str
    entry: Snapshot  # the ledger entry as read
    subject: Snapshot  # the message or rotation as read
    actions: tuple[Action, ...]
    one_answer: bool  # a message's `one_answer` (rotations answer one per person)
    post: PinnedPost | None  # the post as rendered, buttons left out
    render_version: int | None  # what rendered a rotation day's post (formatting.slack_text)
    text: str | None  # a rotation day's template (a message's post pins no source)

    @property
    def ledger(self) -> dict[str, Any]:
        return self.entry.to_dict() or {}

    @property
    def platform(self) -> str:
        return entry_post(self.ledger)[0]

    @property
    def data(self) -> dict[str, Any]:
        return self.subject.to_dict() or {}


def read_posted(rt: Runtime, delivery_id: str) -> Posted | None:
    """The post behind `delivery_id`; None when it is not a post of ours with buttons."""
    entry = rt.db.collection(DELIVERIES).document(delivery_id).get()
    ledger: dict[str, Any] = entry.to_dict() or {}
    message_id = ledger.get(LedgerField.MESSAGE_ID)
    rotation_id = ledger.get(LedgerField.ROTATION_ID)
    if isinstance(message_id, str) and is_document_id(message_id):
        kind, subject_id, collection = LedgerKind.MESSAGE, message_id, MESSAGES
    elif isinstance(rotation_id, str) and is_document_id(rotation_id):
        kind, subject_id, collection = LedgerKind.ROTATION, rotation_id, ROTATIONS
    else:
        return None
    try:
        actions = pinned_catalog(ledger.get(LedgerField.ACTIONS))
    except DocumentError:
        return None
    if not actions:
        return None
    subject = rt.db.collection(collection).document(subject_id).get()
    text = ledger.get(LedgerField.TEXT)
    version = ledger.get(LedgerField.RENDER_VERSION)
    message = kind is LedgerKind.MESSAGE
    return Posted(
        kind,
        subject_id,
        entry,
        subject,
        actions,
        one_answer=message and ledger.get(LedgerField.ONE_ANSWER) is True,
        post=PinnedPost.from_document(ledger.get(LedgerField.POST)),
        render_version=version if isinstance(version, int) else None,
        text=text if isinstance(text, str) else None,
    )
