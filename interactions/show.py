"""The Slack message shows its answers: a chat.update of the original post (found through
the ledger: channel and slack_ts) with a line per answer, labels from the catalog the post
was sent with (interactions.posted).

Each answer is created `pending_update: true`; the marker is removed only once an update
that included the answer was taken by Slack. A failed update leaves it, and every tick
retries the pending ones (`show_pending`); the recorded answer itself is never touched.
After an update the answers are read again, and a newer one not yet shown is shown at once,
so whichever of two concurrent updates lands last, the message ends showing both."""

from __future__ import annotations

from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from core import logs
from core.actions import Action, find
from core.documents.deliveries import LedgerField, LedgerKind
from core.documents.responses import ResponseField
from core.errors import DocumentError
from core.runtime import Runtime
from core.slack import Outcome
from core.store import RESPONSES, Snapshot
from formatting.buttons import answered
from formatting.slack_text import SlackMessage, to_slack
from interactions.posted import Posted, read_posted
from rotations.render import render_turn

# Updates of one message in one call: enough for the answers that arrive while one is sent.
_ROUNDS = 3
# Pending answers the tick looks at per pass.
SWEEP_LIMIT = 100


def show_answers(rt: Runtime, delivery_id: str) -> bool:
    """Update the delivery's Slack message to show every answer; whether all are shown."""
    shown: set[str] = set()
    for _ in range(_ROUNDS):
        answers = _answers(rt, delivery_id)
        if {snap.id for snap in answers} <= shown:
            return True
        if not _update(rt, delivery_id, answers):
            return False
        shown = {snap.id for snap in answers}
        batch = rt.db.batch()
        for snap in answers:
            if _field(snap, ResponseField.PENDING_UPDATE) is not None:
                done = {ResponseField.PENDING_UPDATE.value, ResponseField.UPDATE_ERROR.value}
                batch.update(snap.reference, dict.fromkeys(done, firestore.DELETE_FIELD))
        batch.commit()
    return False


def show_pending(rt: Runtime, limit: int = SWEEP_LIMIT) -> int:
    """The tick's retry: each delivery with an answer still `pending_update`, updated; how
    many deliveries now show all their answers."""
    query = (
        rt.db.collection(RESPONSES)
        .where(filter=FieldFilter(ResponseField.PENDING_UPDATE, "==", True))
        .limit(limit)
    )
    deliveries = {str(_field(snap, ResponseField.DELIVERY_ID)) for snap in query.stream()}
    return sum(show_answers(rt, delivery_id) for delivery_id in sorted(deliveries))


def _answers(rt: Runtime, delivery_id: str) -> list[Snapshot]:
    query = rt.db.collection(RESPONSES).where(
        filter=FieldFilter(ResponseField.DELIVERY_ID, "==", delivery_id)
    )
    return sorted(
        query.stream(), key=lambda snap: (str(_field(snap, ResponseField.ANSWERED_AT)), snap.id)
    )


def _update(rt: Runtime, delivery_id: str, answers: list[Snapshot]) -> bool:
    posted = read_posted(rt, delivery_id)
    if posted is None:
        return _failed(answers, "no_catalog")  # its subject or catalog is gone or malformed
    channel, ts = posted.ledger.get(LedgerField.CHANNEL), posted.ledger.get(LedgerField.SLACK_TS)
    if not (isinstance(channel, str) and isinstance(ts, str)):
        return _failed(answers, "not_posted_yet")  # the send is not recorded yet: next pass
    try:
        pairs = _labelled(answers, posted.actions)
        closed = posted.one_answer and bool(pairs)
        shown = answered(_rendered(posted), delivery_id, posted.actions, pairs, closed=closed)
    except DocumentError as exc:
        return _failed(answers, exc.code)
    result = rt.slack.update(channel, ts, shown.text, shown.blocks, delivery_id)
    if result.outcome is not Outcome.DELIVERED:
        logs.warning(
            "answers not shown yet; retried on the next pass",
            delivery_id=delivery_id,
            error_code=result.code,
        )
        return _failed(answers, result.code or "update_failed")
    logs.info("answers shown", delivery_id=delivery_id, answers=len(pairs))
    return True


def _rendered(posted: Posted) -> SlackMessage:
    """The post as it was sent, from the source its entry pinned (interactions.posted): a
    message's text; a rotation day's template naming the member who takes the turn now
    (interactions.skip may have handed it on). DocumentError `no_text` without one."""
    if posted.text is None:
        raise DocumentError("no_text", "the post's text is neither pinned nor stored")
    if posted.kind is LedgerKind.ROTATION:
        return render_turn(posted.text, str(posted.ledger.get(LedgerField.MEMBER)))
    return to_slack(posted.text, allow_broadcast=posted.allow_broadcast)


def _labelled(answers: list[Snapshot], actions: tuple[Action, ...]) -> list[tuple[str, Action]]:
    pairs = []
    for snap in answers:
        action = find(actions, str(_field(snap, ResponseField.ACTION_ID)))
        if action is not None:
            pairs.append((str(_field(snap, ResponseField.USER)), action))
    return pairs


def _failed(answers: list[Snapshot], code: str) -> bool:
    for snap in answers:
        if _field(snap, ResponseField.PENDING_UPDATE) is True:
            snap.reference.update({ResponseField.UPDATE_ERROR.value: code})
    return False


def _field(snap: Snapshot, field: ResponseField) -> Any:
    return (snap.to_dict() or {}).get(field)
