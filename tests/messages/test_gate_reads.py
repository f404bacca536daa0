"""What the gates read in a pass (processor.gates): each person's `people` document once, in
one batched read for the whole due page, with each claim's reservation carried forward to
the person's next claim in the same pass."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any

from google.cloud import firestore

from core.models import message_delivery_id
from core.store import MESSAGES, PEOPLE
from emulator.slack_standin import Fault
from messages.kind import MESSAGE_KIND
from processor.claim import claim_occurrence
from processor.outcome import Result
from targets.kinds import run_pass
from tests.fixtures.clock import T0
from tests.fixtures.deliveries import ledger
from tests.fixtures.people import opt_out, person_doc, seed_category, to_person
from tests.fixtures.runtime import make_runtime

PEOPLE_IDS = ("U0READS1", "U0READS2", "U0READS3")


class ReadsCounted(firestore.Client):
    """The real client, counting the `people` documents each batched get asks for (a
    single document's `get()` goes through `get_all` too)."""

    def __init__(self, project: str) -> None:
        super().__init__(project=project)
        self.people_read: Counter[str] = Counter()
        self.people_gets = 0

    def get_all(self, references: Any, *args: Any, **kwargs: Any) -> Any:
        refs = list(references)
        people = [ref.id for ref in refs if ref.parent.id == PEOPLE]
        self.people_read.update(people)
        self.people_gets += bool(people)
        return super().get_all(refs, *args, **kwargs)


def test_a_pass_reads_each_persons_document_once_and_carries_its_claims_forward(
    settings, db, clock, slack
):
    seed_category(db, "nudges", quiet_window_hours=4)
    seed_category(db, "digest", daily_cap=2)
    seed_category(db, "reminders")
    seeded = []
    for minutes, category in enumerate(("nudges", "digest", "digest", "reminders", "nudges")):
        at = T0 - timedelta(minutes=5 - minutes)  # due in this order, one person's lane
        seeded += [
            (to_person(db, category, user, send_at=at, next_run_at=at), at) for user in PEOPLE_IDS
        ]
    counted = ReadsCounted(db.project)

    summary = run_pass(make_runtime(settings, counted, clock, "worker-a"))

    # Four posts each in the one pass: every reserving claim after a person's first landed
    # under the version its predecessor left (carried forward, never read again).
    assert summary["sent"] == 12 and summary["skipped"] == 3 and summary["deferred"] == 0
    assert counted.people_read == Counter(PEOPLE_IDS) and counted.people_gets == 1
    entries = ledger(db)
    for user in PEOPLE_IDS:
        reasons = [
            entries[message_delivery_id(mid, at)].get("reason")
            for mid, at in seeded
            if entries[message_delivery_id(mid, at)]["user"] == user
        ]
        assert reasons == [None, None, None, None, "quiet_window"]
        assert len(person_doc(db, user)["caps"]["digest"][T0.date().isoformat()]) == 2


def test_an_opt_out_written_after_the_pass_read_fails_the_claim_and_is_skipped_next(
    settings, db, clock, slack
):
    """The gates read the person before the opt-out; the claim's reservation is conditioned
    on that version, so it fails whole, and the next pass skips the nudge `opted_out`."""
    seed_category(db, "nudges", quiet_window_hours=4)
    mid = to_person(db, "nudges")
    rt = make_runtime(settings, db, clock, "worker-a")
    snap = db.collection(MESSAGES).document(mid).get()
    ahead = MESSAGE_KIND.read_ahead(rt, [snap])
    opt_out(db, "U0PERSON1", "nudges")

    assert claim_occurrence(rt, MESSAGE_KIND, snap, ahead=ahead) is Result.DUPLICATE
    run_pass(rt)

    assert slack.posts() == []
    assert ledger(db)[message_delivery_id(mid, T0)]["reason"] == "opted_out"


def test_a_give_back_costs_its_person_one_more_read_in_the_pass(settings, db, clock, slack):
    """A person whose first DM failed definitively is read once more before their next
    decision (the give-back's write moved their document), and that DM is sent; everyone
    else is still read once."""
    seed_category(db, "nudges", quiet_window_hours=4)
    seeded = {
        user: [
            to_person(db, "nudges", user, send_at=at, next_run_at=at)
            for at in (T0 - timedelta(minutes=2), T0 - timedelta(minutes=1))
        ]
        for user in PEOPLE_IDS
    }
    failing = PEOPLE_IDS[0]
    slack.inject(
        Fault(kind="error", code="msg_too_long", channel=slack.dm_channel(failing), times=1)
    )
    counted = ReadsCounted(db.project)

    summary = run_pass(make_runtime(settings, counted, clock, "worker-a"))

    assert counted.people_read == Counter(PEOPLE_IDS) + Counter([failing])
    assert summary["sent"] == 3 and summary["failed"] == 1 and summary["skipped"] == 2
    entries = ledger(db)
    second = message_delivery_id(seeded[failing][1], T0 - timedelta(minutes=1))
    assert entries[second]["status"] == "sent"
    assert list(person_doc(db, failing)["quiet_sends"]) == [second]
