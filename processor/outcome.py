"""What happened to one document in one pass: the tick counts these."""

from __future__ import annotations

import enum


class Result(enum.Enum):
    SENT = "sent"  # a one-off delivered
    ADVANCED = "advanced"  # a recurring occurrence delivered, the series re-armed
    COMPLETED = "completed"  # the last occurrence of a series delivered
    FAILED = "failed"  # definitive failure, or a document that cannot be sent as it is
    RELEASED = "released"  # not delivered, released to be claimed again later
    AMBIGUOUS = "ambiguous"  # Slack may have it; held under the lease for reconciliation
    DUPLICATE = "duplicate"  # another worker owns (or already delivered) this occurrence
    SKIPPED = "skipped"  # deleted, or no longer waiting when we looked
    FENCED = "fenced"  # our lease was taken over before we could record the outcome

    @property
    def delivered(self) -> bool:
        return self in (Result.SENT, Result.ADVANCED, Result.COMPLETED)
