"""What happened to one document in one pass: the tick counts these."""

from __future__ import annotations

import enum
from collections import Counter


class Result(enum.Enum):
    SENT = "sent"  # a one-off delivered
    ADVANCED = "advanced"  # a recurring occurrence delivered, the series re-armed
    COMPLETED = "completed"  # the last occurrence of a series delivered
    FAILED = "failed"  # definitive failure, or a document that cannot be sent as it is
    RELEASED = "released"  # not delivered, released to be claimed again later
    AMBIGUOUS = "ambiguous"  # Slack may have it; held under the lease for reconciliation
    UNCONFIRMED = "unconfirmed"  # outcome unverifiable, policy forbids resending: a person decides
    DUPLICATE = "duplicate"  # another worker owns (or already delivered) this occurrence
    SKIPPED = "skipped"  # deleted, or no longer waiting when we looked
    FENCED = "fenced"  # our lease was taken over before we could record the outcome

    @property
    def delivered(self) -> bool:
        return self in (Result.SENT, Result.ADVANCED, Result.COMPLETED)


# The summary's counts, always present so a dashboard never sees a missing key.
SUMMARY_KEYS = (
    "sent",
    "failed",
    "claimed",
    "advanced",
    "completed",
    "skipped",
    "duplicates",
    "released",
    "ambiguous",
    "unconfirmed",
    "reconciled",
    "deferred",
    "errors",
    "published",  # DISPATCH=pubsub: due occurrences handed to `deliver` (processor.publish)
    "scans",  # DISPATCH=pubsub: scan requests published (processor.scan)
)
# Every delivered occurrence counts in `sent`; these say more about what happened.
_KEY_OF = {
    Result.ADVANCED: "advanced",
    Result.COMPLETED: "completed",
    Result.FAILED: "failed",
    Result.RELEASED: "released",
    Result.AMBIGUOUS: "ambiguous",
    Result.UNCONFIRMED: "unconfirmed",
    Result.DUPLICATE: "duplicates",
    Result.SKIPPED: "skipped",
    Result.FENCED: "duplicates",
}


def tally(counts: Counter[str], result: Result) -> None:
    counts["sent"] += result.delivered
    if result in _KEY_OF:
        counts[_KEY_OF[result]] += 1
