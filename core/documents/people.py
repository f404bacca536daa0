"""`people/{user id}` (our addition to CONTRACT.md): what the gates keep per person, so that a
claim reads one small document instead of querying history. Written only by the processor:
reserved in a claim's own commit (under the version the claim read), and updated or given back
in the finalize of that send (messages.gates)."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class PersonField(enum.StrEnum):
    # The last quiet-window message delivered to this person (the window runs from it).
    QUIET_SENT_AT = "quiet_sent_at"
    # Quiet-window sends claimed and not yet settled: {delivery id: claimed at}. Each one
    # holds the window as a send would, until its finalize records or gives it back.
    QUIET_HELD = "quiet_held"
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
