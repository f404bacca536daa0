"""The Home tab's Cancel racing a pass's claim of the same occurrence, in every interleaving
(orchestrate) of the tab's permission read, its cancel and the claim and send: either the
message is cancelled and nothing is posted, or the tab says nothing changed and the
occurrence is posted once. The cancel is conditioned on the version the permission check
read, so it never lands on a message that changed after the check."""

from __future__ import annotations

from core.models import message_delivery_id
from core.store import MESSAGES
from interactions.home_actions import act
from interactions.home_view import CANCEL
from messages.kind import MESSAGE_KIND
from processor.abc import Claim
from processor.claim import claim_occurrence
from processor.deliver import send
from processor.finalize import finalize
from processor.kind_pass import run_kind
from tests.fixtures.clock import T0
from tests.fixtures.messages import message, seed_message
from tests.fixtures.runtime import make_runtime
from tests.support.interleave import Rounds, orchestrate

ANA = "U0ANA1234"


def test_a_cancel_from_the_tab_racing_a_claim_either_stops_the_send_or_changes_nothing(
    settings, db, slack, clock
):
    rounds = Rounds(lambda: seed_message(db, created_by=ANA, text="Deploy at noon"))
    notices: dict[str, str] = {}
    tab, worker = (make_runtime(settings, db, clock, name) for name in ("tab", "worker-a"))

    def cancel_from_the_tab() -> None:
        mid = rounds.message_for_this_round()
        notices[mid] = act(tab, ANA, CANCEL, mid)

    def claim_and_send() -> None:
        snap = db.collection(MESSAGES).document(rounds.message_for_this_round()).get()
        claim = claim_occurrence(worker, MESSAGE_KIND, snap)  # pragma: SYNCPOINT edit
        if isinstance(claim, Claim):
            post = send(worker, claim)  # pragma: SYNCPOINT edit
            finalize(worker, claim, post)

    orchestrate(cancel_from_the_tab, claim_and_send, name="edit")

    run_kind(worker, MESSAGE_KIND)
    posted = [p.delivery_id for p in slack.posts()]
    assert len(rounds.messages) > 2
    for mid in rounds.messages:
        if notices[mid].startswith("Cancelled"):
            assert message(db, mid)["status"] == "cancelled"
            assert message_delivery_id(mid, T0) not in posted
        else:
            assert notices[mid].startswith("Nothing changed")
            assert message(db, mid)["status"] == "sent"
            assert posted.count(message_delivery_id(mid, T0)) == 1
