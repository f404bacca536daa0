"""A verified click, checked against our ledger and the catalog its post was sent with,
recorded as the first answer or refused as a later one.

The answer is the create() of `responses/{delivery_id}:{user}` (`responses/{delivery_id}`
when the message sets `one_answer`): Firestore refuses a second create of the same id, so of
any number of concurrent clicks exactly one is recorded, with no read before the write that
a concurrent click could slip past. A rotation's `skip_today` is recorded by the same create,
in the commit that hands the turn on (interactions.skip); a message's reserved
`mute_category` and its Undo change the clicker's preferences instead (interactions.mute)."""

from __future__ import annotations

from google.api_core.exceptions import AlreadyExists

from core.actions import MUTE_CATEGORY, UNMUTE_CATEGORY, Action, find
from core.documents.deliveries import LedgerField, LedgerKind
from core.runtime import Runtime
from core.store import RESPONSES
from interactions.click import Click
from interactions.mute import UNDO, toggle_mute
from interactions.outcome import Answer, Recorded, answer_fields, earlier_answer, response_id
from interactions.posted import Posted, read_posted
from interactions.skip import SKIP_TODAY, skip_turn

__all__ = ["Answer", "Recorded", "record_click", "response_id"]


def record_click(rt: Runtime, click: Click) -> Recorded:
    posted = read_posted(rt, click.delivery_id)
    if posted is None or not _same_channel(posted, click):
        return Recorded(Answer.NOT_OURS)
    action = find(posted.actions, click.action_id)
    if click.action_id == UNMUTE_CATEGORY and find(posted.actions, MUTE_CATEGORY):
        action = Action(UNMUTE_CATEGORY, UNDO)  # the Undo a muted post shows (interactions.show)
    if action is None:
        return Recorded(Answer.UNKNOWN_ACTION)
    if posted.kind is LedgerKind.MESSAGE and action.id in (MUTE_CATEGORY, UNMUTE_CATEGORY):
        return toggle_mute(rt, click, posted, action)
    if posted.kind is LedgerKind.ROTATION and action.id == SKIP_TODAY:
        return skip_turn(rt, click, posted, action)
    # The catalog is read; a concurrent click may be anywhere from here on.
    once = posted.one_answer
    document_id = response_id(click.delivery_id, click.user, once)  # pragma: SYNCPOINT answer
    reference = rt.db.collection(RESPONSES).document(document_id)
    try:
        reference.create(answer_fields(rt, click, posted, action))
    except AlreadyExists:
        return earlier_answer(reference, posted)
    return Recorded(Answer.RECORDED, action, click.user)


def _same_channel(posted: Posted, click: Click) -> bool:
    posted_to = posted.ledger.get(LedgerField.CHANNEL)
    return click.channel is None or posted_to is None or click.channel == posted_to
