"""A rotation's claimed day (the subject of a day's claim), and what its ledger entry pins
of the post: planned by rotations.claim, sent and recorded by rotations.kind."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from core.actions import to_document
from core.documents.deliveries import LedgerWrite, PinnedPost
from core.documents.write import UNSET, Unset
from core.errors import DocumentError
from core.rotation import Rotation
from formatting.render import pinned
from formatting.slack_text import RENDER_VERSION
from rotations.render import render_turn


@dataclass(frozen=True)
class DayTurn:
    """A rotation's claimed day: whose turn it is, and what giving the day back restores."""

    rotation: Rotation
    day: date
    member: str
    rollback: dict[str, Any]  # the fields a rollback restores, as they were before the claim
    escalated: bool = False  # an earlier attempt of this day alerted already


def pinned_day(rotation: Rotation, member: str) -> LedgerWrite:
    """What a day's post (rotations.kind's render) naming `member` is, for its ledger
    entry's claim (LedgerField.ACTIONS): its buttons, its rendered text and blocks, and the
    template and `RENDER_VERSION` that rendered them, so that an update can name whoever
    takes the turn then (`skip_today` may hand it on; rotations.render.handed_on). Nothing
    for a post without buttons: no click or update ever reads it."""
    if not rotation.actions:
        return LedgerWrite()
    try:
        rendered = render_turn(rotation.text, member, rotation.platform)
        post: PinnedPost | Unset = pinned(rendered, member)
    except DocumentError:  # the send fails on the same error: there is no post to update
        post = UNSET
    return LedgerWrite(
        actions=to_document(rotation.actions),
        post=post,
        text=rotation.text,
        render_version=RENDER_VERSION,
    )
