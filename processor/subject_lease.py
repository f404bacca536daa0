"""What the kinds whose subject carries one occurrence's lease (a scheduled message, an
event; rotations lease a day instead) share: reading an expired lease, telling it is still
a claim's own, and wording the outcome line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.documents.leases import LEASE, LeaseField
from core.errors import DocumentError
from core.slack import PostResult
from processor.abc import Claim, Leased, LeaseUnreadable, OutcomeLine
from processor.outcome import Result


def leased_occurrence(
    noun: str,
    data: dict[str, Any],
    parses: Callable[[], object],
    delivery_id: Callable[[datetime], str],
) -> Leased:
    """The occurrence an expired lease names; LeaseUnreadable when the subject no longer
    parses (`parses` raises DocumentError) or the lease names no occurrence."""
    try:
        parses()
    except DocumentError as exc:
        raise LeaseUnreadable(exc.code, f"{noun} no longer parses: {exc.message}") from None
    occurrence = (data.get(LEASE) or {}).get(LeaseField.OCCURRENCE_AT)
    if not isinstance(occurrence, datetime):
        raise LeaseUnreadable("invalid_lease", f"{noun}'s lease names no occurrence")
    return Leased(occurrence, delivery_id(occurrence), {})


def holds_lease(claim: Claim[Any], subject: dict[str, Any], status: Any, sending: str) -> bool:
    """Whether the stored subject (its `status`) still shows this claim's lease."""
    lease = subject.get(LEASE) or {}
    return (
        status == sending
        and lease.get(LeaseField.OWNER) == claim.owner
        and lease.get(LeaseField.OCCURRENCE_AT) == claim.occurrence_at
    )


@dataclass(frozen=True)
class OutcomeWords:
    """How a kind's outcome lines read."""

    delivered: str
    ambiguous: str
    released: str


def outcome_line(words: OutcomeWords, post: PostResult, result: Result) -> OutcomeLine:
    """The one line of an outcome: failed and unconfirmed ones are alerts; an ambiguous or
    released one a warning (released: with Slack's `retry_after`)."""
    alert = result in (Result.FAILED, Result.UNCONFIRMED)
    fields: dict[str, Any] = {}
    if result is Result.AMBIGUOUS:
        level, text = "warning", words.ambiguous
    elif result is Result.RELEASED:
        level, text = "warning", words.released
        fields["retry_after"] = post.retry_after
    else:
        level, text = "info", words.delivered
    return OutcomeLine(level, text, post.code, post.detail, alert, fields)
