"""`skip_today`, a rotation's reserved action ("Skip me today"): the member the day's post
names hands the turn on by the rotation's skip rules (core.rotation.give_back): they are
added to the day's `skips`, the next member who is not skipped takes the turn and moves in
front of them, so they keep their place and are next.

Only the member the post names may use it, on the day itself, while the rotation is still
on that day as its post left it; anyone else (or a click on a past day's post) is told why
in an ephemeral reply, and nothing is recorded or changed.

The change is ONE commit: the rotation (`skips` of the day, `members`, `cursor`,
`last_member`) under a precondition on its read, the day's ledger entry (`member`) under a
precondition on its read, and the create of the clicker's answer. Of any number of
concurrent clicks one commits; the others fail the create (the answer exists: "already
answered") or a precondition (read again and decided anew).
"""

from __future__ import annotations

from typing import Any

from google.api_core.exceptions import AlreadyExists, FailedPrecondition

from core.actions import Action
from core.documents.deliveries import LedgerField, LedgerStatus, LedgerWrite
from core.documents.rotations import RotationField, RotationWrite
from core.errors import DocumentError
from core.rotation import Rotation, Turn, give_back
from core.runtime import Runtime
from core.store import RESPONSES
from interactions.click import Click
from interactions.outcome import Answer, Recorded, answer_fields, earlier_answer, response_id
from interactions.posted import Posted, read_posted

SKIP_TODAY = "skip_today"
# Reads and commits a click tries while other writes keep changing the rotation.
_TRIES = 3


def skip_turn(rt: Runtime, click: Click, posted: Posted, action: Action) -> Recorded:
    """The turn handed on from `click.user`, or why not.

    The change is shown by a chat.update of the day's post (interactions.show), retried by
    every pass until taken, not by a new post: an update can be repeated without ever
    posting twice, where a post would need a claim and reconciliation of its own."""
    answer_id = response_id(click.delivery_id, click.user, one_answer=False)
    answer = rt.db.collection(RESPONSES).document(answer_id)
    for _ in range(_TRIES):
        decided = _decide(rt, click, posted)
        if isinstance(decided, Recorded):
            # A refusal read after this person's own skip won (the post names another
            # member now) is told as what it is: already answered.
            return earlier_answer(answer, posted) if answer.get().exists else decided
        # Decided on what was read; a concurrent click may commit from here on.
        batch = rt.db.batch()  # pragma: SYNCPOINT skip today
        batch.update(
            posted.subject.reference,
            _rotation_update(rt, posted, decided),
            option=rt.db.write_option(last_update_time=posted.subject.update_time),
        )
        batch.update(
            posted.entry.reference,
            LedgerWrite(member=decided.member).to_document(),
            option=rt.db.write_option(last_update_time=posted.entry.update_time),
        )
        batch.create(answer, answer_fields(rt, click, posted, action))
        try:
            batch.commit()
        except AlreadyExists:
            return earlier_answer(answer, posted)
        except FailedPrecondition:  # changed since read: decided again on a fresh read
            again = read_posted(rt, click.delivery_id)
            if again is None:
                return Recorded(Answer.NOT_OURS)
            posted = again
            continue
        return Recorded(Answer.RECORDED, action, click.user)
    return Recorded(Answer.REFUSED, reason="The rotation is changing right now; try again.")


def _decide(rt: Runtime, click: Click, posted: Posted) -> Turn | Recorded:
    """The turn as it goes once `click.user` is skipped too; or the refusal."""
    ledger = posted.ledger
    member = ledger.get(LedgerField.MEMBER)
    if click.user != member:
        return _refused(f"Only <@{member}>, whose turn this post names, can skip it.")
    if ledger.get(LedgerField.STATUS) != LedgerStatus.SENT:
        return _refused("This turn is not recorded as posted yet; try again in a moment.")
    try:
        rotation = Rotation.from_document(posted.subject_id, posted.data)
    except DocumentError:
        return Recorded(Answer.NOT_OURS)
    today = rotation.today(rt.clock.now())
    day = ledger.get(LedgerField.OCCURRENCE_DATE)
    stored_day = posted.data.get(RotationField.LAST_PROCESSED_DATE)
    if day != today.isoformat() or stored_day != day or posted.data.get(RotationField.LEASE):
        return _refused("This turn's day is over: there is nothing to skip any more.")
    skipped = rotation.skipped_on(today)
    turn = give_back(rotation.members, rotation.cursor, skipped, click.user, today)
    if turn is None:
        return _refused("The rotation was edited since this post; ask its owner to change it.")
    if turn.member is None:
        return _refused("Everybody else is out today: nobody can take this turn.")
    return turn


def _rotation_update(rt: Runtime, posted: Posted, turn: Turn) -> dict[str, Any]:
    stored = posted.data.get(RotationField.SKIPS)
    day = turn.day.isoformat()
    # Past days' skips decide nothing any more: dropped, so skips never outgrow what an
    # edit accepts (composer.models.MAX_SKIP_DATES).
    kept = stored.items() if isinstance(stored, dict) else ()
    skips: dict[str, Any] = {date: out for date, out in kept if str(date) >= day}
    out = skips.get(day)
    skips[day] = [*(out if isinstance(out, list) else []), str(posted.ledger[LedgerField.MEMBER])]
    return (
        RotationWrite(
            skips=skips,
            members=list(turn.members),
            cursor=turn.cursor,
            last_member=turn.member,
        )
        .stamped(rt.clock.now())
        .to_document()
    )


def _refused(reason: str) -> Recorded:
    return Recorded(Answer.REFUSED, reason=reason)
