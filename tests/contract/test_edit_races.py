"""An edit through the `api` target racing a claim, through every interleaving of the
`# pragma: SYNCPOINT edit` lines (composer/versions.py and the claim below), for every kind
the API edits: the edit lands before the claim (the post carries it), or meets the claimed
occurrence and answers 409 (the old text is posted), or lands after the occurrence was
settled (its answer shows that post). Never a 200 whose text nobody posted and that no
settled post explains, never a second post."""

from __future__ import annotations

from collections import Counter
from math import comb
from typing import Any

import pytest

from core.platform import SLACK
from processor.abc import Claim
from processor.claim import claim_occurrence
from processor.deliver import send
from processor.finalize import finalize
from tests.contract.subjects import (
    CHANNEL,
    SUBJECTS,
    Seeded,
    Subject,
    World,
    on_every_platform,
    one_pass,
)
from tests.fixtures.api import call
from tests.fixtures.runtime import make_runtime
from tests.support.interleave import orchestrate

# `{member}` names a rotation's member; a message posts it as written.
OLD, NEW = "{member}: the train leaves at 10:00", "{member}: the train is delayed to 10:30"


class Rounds:
    """The first thread to start a round seeds a fresh due document; the other races it."""

    def __init__(self, world: World, subject: Subject) -> None:
        self.world, self.subject = world, subject
        self.arrivals = 0
        self.seeded: list[Seeded] = []

    def this_round(self) -> Seeded:
        if self.arrivals % 2 == 0:
            self.seeded.append(self.subject.seed(self.world, CHANNEL, {"text": OLD}))
        self.arrivals += 1
        return self.seeded[-1]


EDITED = [(p, s) for p, s in on_every_platform(SUBJECTS) if s.edit_route]


@pytest.mark.parametrize(("platform", "subject"), EDITED, ids=[f"{p}-{s.name}" for p, s in EDITED])
def test_an_edit_racing_a_claim_lands_first_or_is_409_in_every_interleaving(
    api_app, settings, world, subject
):
    rounds = Rounds(world, subject)
    edits: dict[str, tuple[int, Any]] = {}
    rt = make_runtime(settings, world.db, world.clock, "worker-a")

    def edit() -> None:
        seeded = rounds.this_round()
        path = f"{subject.edit_route}{seeded.id}"
        edits[seeded.id] = call(api_app.test_client(), "PUT", path, {"text": NEW})

    def claim_and_post() -> None:
        ref = world.db.collection(subject.kind.collection).document(rounds.this_round().id)
        claim = claim_occurrence(rt, subject.kind, ref.get())  # pragma: SYNCPOINT edit
        if isinstance(claim, Claim):
            post = send(rt, claim)  # pragma: SYNCPOINT edit
            finalize(rt, claim, post)

    counts = orchestrate(edit, claim_and_post, name="edit")

    assert min(counts) >= 2
    assert len(rounds.seeded) == comb(sum(counts), counts[0])
    one_pass(rt, subject)  # a claim that lost to the edit goes out now
    seen: Counter[tuple[int, str]] = Counter()
    for seeded in rounds.seeded:
        [post] = [p for p in world.chat.posts() if p.delivery_id == seeded.delivery_id]
        posted = NEW if "10:30" in (post.text or "") else OLD
        status, answer = edits[seeded.id]
        assert status in (200, 409), (status, answer)
        assert subject.stored(world, seeded)["text"] == (NEW if status == 200 else OLD)
        if status == 409:
            assert posted == OLD
        elif posted == OLD:  # a 200 whose text was not posted: it came after the settle
            assert "lease" not in answer and answer.get("last_sent_at") is not None
            if world.chat.platform == SLACK:  # a Teams post's id is on the ledger only
                assert answer.get("last_slack_ts") == post.post_id
        seen[(status, posted)] += 1
    assert len(world.chat.posts()) == len(rounds.seeded)
    # Both sides of the race happened: an edit that landed first, and one that met the claim.
    assert seen[(200, NEW)] and seen[(409, OLD)]
