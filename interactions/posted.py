"""The post a click names: its ledger entry, what it was sent for (a message, or a
rotation's day) and the catalog of buttons it was sent with.

The catalog is the one the ledger entry pinned when the post was recorded `sent`
(`deliveries.actions`), so an edit of the subject's `actions` after the send neither
relabels old answers nor lets an old post take an action it never showed. An entry without
one (recorded before catalogs were pinned, or read between the post and its record, while
the subject cannot be edited) falls back to the subject's current catalog."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.actions import Action, catalog
from core.documents.deliveries import LedgerField, LedgerKind
from core.documents.messages import MessageField
from core.documents.rotations import RotationField
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

    @property
    def ledger(self) -> dict[str, Any]:
        return self.entry.to_dict() or {}

    @property
    def data(self) -> dict[str, Any]:
        return self.subject.to_dict() or {}


def read_posted(rt: Runtime, delivery_id: str) -> Posted | None:
    """The post behind `delivery_id`; None when it is not a post of ours with buttons."""
    entry = rt.db.collection(DELIVERIES).document(delivery_id).get()
    ledger: dict[str, Any] = entry.to_dict() or {}
    message_id = ledger.get(LedgerField.MESSAGE_ID)
    rotation_id = ledger.get(LedgerField.ROTATION_ID)
    one_answer: str | None
    if isinstance(message_id, str) and is_document_id(message_id):
        kind, subject_id, collection = LedgerKind.MESSAGE, message_id, MESSAGES
        current, one_answer = MessageField.ACTIONS.value, MessageField.ONE_ANSWER.value
    elif isinstance(rotation_id, str) and is_document_id(rotation_id):
        kind, subject_id, collection = LedgerKind.ROTATION, rotation_id, ROTATIONS
        current, one_answer = RotationField.ACTIONS.value, None
    else:
        return None
    subject = rt.db.collection(collection).document(subject_id).get()
    data: dict[str, Any] = subject.to_dict() or {}
    stored = ledger[LedgerField.ACTIONS] if LedgerField.ACTIONS in ledger else data.get(current)
    try:
        actions = catalog(stored)
    except DocumentError:
        return None
    if not actions:
        return None
    answer_once = one_answer is not None and data.get(one_answer) is True
    return Posted(kind, subject_id, entry, subject, actions, answer_once)
