"""`people/{user id}` (our addition to CONTRACT.md): what the gates read per person, so that a
claim reads one small document instead of querying history. Written by the processor
(reserved in a claim's own commit, under the version the claim read; given back in the
finalize of a send that never reached Slack: processor.gates) and by `PUT /preferences`
(the person's opt-outs, beside `preferences/{user}`)."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class PersonField(enum.StrEnum):
    # The categories this person opted out of: `preferences/{user}.opted_out`, as the API
    # last wrote it (in the same batch), so that the gates read one document per person.
    OPTED_OUT = "opted_out"
    # Quiet-window sends claimed and not given back, delivered or not settled yet:
    # {delivery id: claimed at}, the latest few. The window runs from the latest.
    QUIET_SENDS = "quiet_sends"
    # Daily caps: {category id: {local YYYY-MM-DD: [delivery ids counted that day]}}. A list
    # of ids, not a number: giving one back twice, or one never reserved, changes nothing.
    CAPS = "caps"


@dataclass(frozen=True)
class Holds:
    """What a claim reserved for its send on the person's document (and names on its ledger
    entry, `gates`), so that its finalize or reconciliation knows what to record or give
    back: the quiet window, and the daily cap of `cap_day` (the local day counted)."""

    quiet: bool = False
    cap_day: str | None = None

    def __bool__(self) -> bool:
        return self.quiet or self.cap_day is not None

    def to_document(self) -> dict[str, object]:
        return {"quiet": self.quiet, "cap_day": self.cap_day}

    @classmethod
    def from_document(cls, value: object) -> Holds:
        if not isinstance(value, dict):
            return cls()
        day = value.get("cap_day")
        return cls(quiet=value.get("quiet") is True, cap_day=day if isinstance(day, str) else None)


NO_HOLDS = Holds()
