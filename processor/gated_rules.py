"""What the kinds that send to people under their gates share (messages, events;
processor.gates): the page's gate documents read ahead in one batch, and what a claim
reserved on the person's document given back or kept by its outcome."""

from __future__ import annotations

from typing import Protocol, TypeVar

from core.platform import Outcome
from core.runtime import Runtime
from core.store import Snapshot
from processor.abc import Claim
from processor.gates import Gated, Gates, read_gates, settled_writes
from processor.occurrence_kind import Addressed, OccurrenceRules, Others


class GatedSubject(Addressed, Gated, Protocol):
    """A subject sent to a person under their gates."""


G = TypeVar("G", bound=GatedSubject)


class GatedRules(OccurrenceRules[G, Gates]):
    def read_ahead(self, rt: Runtime, due: list[Snapshot]) -> Gates:
        """The gates' documents of the page's sends to people, in one batched read."""
        return read_gates(rt.db, [snap.to_dict() or {} for snap in due])

    def sent(self, ahead: Gates | None, claim: Claim[G], outcome: Outcome) -> None:
        """A give-back is seen by the rest of the pass at once (Gates.sent)."""
        if ahead is not None:
            ahead.sent(claim.subject, claim.delivery_id, outcome)

    def beside(self, claim: Claim[G], outcome: Outcome) -> Others:
        """What the claim reserved for the person's gates: given back, or kept."""
        return settled_writes(claim.subject, claim.delivery_id, outcome)
