"""`mute_category` and its Undo `unmute_category`, the reserved buttons of a message to a
person whose category lets them opt out (core.actions, pinned by the claim with the
category it mutes: LedgerField.MUTE_CATEGORY).

Only the person the message went to may use them; anyone else is told so in an ephemeral
reply, and nothing changes. A click opts them out of (or back into) the pinned category by
the same write as `PUT /preferences` (composer.preferences.write_opted_out), committed under
the version of `preferences/{user}` it was decided on, in ONE batch with the set of the
post's mute answer (`responses/{delivery_id}:mute`, `pending_update` like any answer, so the
post is updated to say so off the request path: interactions.handoff and show). Of two
concurrent clicks one commits; the other reads again and finds nothing left to change, so a
double click is one change."""

from __future__ import annotations

from google.api_core.exceptions import AlreadyExists, FailedPrecondition

from composer.preferences import opted_out_of, write_opted_out
from core.actions import MUTE_CATEGORY, Action
from core.documents.deliveries import LedgerField
from core.platform import TEAMS
from core.runtime import Runtime
from core.store import PREFERENCES, RESPONSES
from interactions.click import Click
from interactions.outcome import Answer, Recorded, answer_fields
from interactions.posted import Posted

UNDO = "Undo"  # the label of `unmute_category`, the button a muted post shows
# Reads and commits a click tries while the person's preferences keep changing.
_TRIES = 3


def mute_id(delivery_id: str) -> str:
    """The post's mute answer: one per post (only its person may click), the latest wins."""
    return f"{delivery_id}:mute"


def toggle_mute(rt: Runtime, click: Click, posted: Posted, action: Action) -> Recorded:
    """The person opted out of the post's category (`mute_category`) or back in (the Undo),
    or why not."""
    person = posted.ledger.get(LedgerField.USER)
    category = posted.ledger.get(LedgerField.MUTE_CATEGORY)
    if not isinstance(person, str) or not isinstance(category, str):
        return Recorded(Answer.NOT_OURS)
    if click.user != person:
        return Recorded(Answer.REFUSED, reason=_not_yours(posted, person))
    mute = action.id == MUTE_CATEGORY
    preferences = rt.db.collection(PREFERENCES).document(person)
    answer = rt.db.collection(RESPONSES).document(mute_id(click.delivery_id))
    for _ in range(_TRIES):
        read = preferences.get()
        opted_out = opted_out_of(person, read.to_dict() or {})
        if (category in opted_out) == mute:
            return Recorded(Answer.ALREADY_ANSWERED, action, person)
        wanted = [*opted_out, category] if mute else [c for c in opted_out if c != category]
        # Decided on what was read; a concurrent click may commit from here on.
        batch = rt.db.batch()  # pragma: SYNCPOINT mute
        write_opted_out(rt.db, batch, person, wanted, read)
        batch.set(answer, answer_fields(rt, click, posted, action))
        try:
            batch.commit()
        except (FailedPrecondition, AlreadyExists):  # changed since read: decided again
            continue
        return Recorded(Answer.RECORDED, action, person)
    return Recorded(Answer.REFUSED, reason="Your preferences are changing right now; try again.")


def _not_yours(posted: Posted, person: str) -> str:
    """What someone else's click is told: the person, by a Slack mention; on Teams, where a
    reply cannot mention, in words."""
    if posted.platform == TEAMS:
        return "This button is for the person this message was sent to."
    return f"This button is for <@{person}>."
