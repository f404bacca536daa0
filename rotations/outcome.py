"""What a rotation day's outcome writes and how it reads (rotations.kind).

- Delivered: the day stays claimed; the lease and the rollback values go.
- Not delivered (rate limited, proven absent, or an explicit failure such as
  `channel_not_found`): the claim is rolled back (`last_processed_date`, `cursor` and
  `members` as they were), `last_error` says why, and the same local day is tried again
  after the wait: Slack's `Retry-After`, or 1, 2, 4... minutes (at most 60) after an
  explicit failure, so inviting the bot back brings today's turn.
- Every given-back day ends settled: `failed` once an explicit failure reaches
  MAX_ATTEMPTS, or `skipped` with `reason: day_ended` when the retry would fall on the next
  local day. A day left `released` by a clock that jumped past its end is closed the same
  way by the rotation's next claim (rotations.missed_days).
- Ambiguous: the claim and its lease stay; reconciliation settles it when the lease expires.

A day is alerted once (`escalated_at` on its ledger entry), not on every try.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from core.documents.deliveries import (
    LedgerField,
    LedgerReason,
    LedgerStatus,
    LedgerWrite,
    sent_write,
)
from core.documents.errors import StoredError
from core.documents.rotations import RESTORED, RotationWrite
from core.documents.write import DELETE, INCREMENT, UNSET
from core.platform import DEFAULT_RETRY_AFTER, SLACK, Outcome, PostResult
from processor.abc import Claim, OutcomeLine, Writes
from processor.outcome import Result
from processor.reconcile import backoff
from rotations.day import DayTurn


def needs_alert(post: PostResult, result: Result) -> bool:
    """A day outcome a person must hear of: failed, unconfirmed, given back after an explicit
    failure (the bot may need inviting back), or ended unposted. Alerted once per day."""
    return result in (Result.FAILED, Result.UNCONFIRMED, Result.SKIPPED) or (
        result is Result.RELEASED and post.outcome is Outcome.FAILED
    )


def day_ended_detail(post: PostResult) -> str:
    return f"{post.detail or post.code}; the local day ended before another try, not posted"


def day_writes(claim: Claim[DayTurn], post: PostResult, now: datetime, max_attempts: int) -> Writes:
    """What a day's outcome writes; the day's first alert marks its entry `escalated_at`."""
    writes = _outcome_writes(claim, post, now, max_attempts)
    if needs_alert(post, writes.result) and not claim.subject.escalated:
        # The day's one alert (day_line).
        return writes._replace(ledger=replace(writes.ledger, escalated_at=now))
    return writes


def day_line(claim: Claim[DayTurn], post: PostResult, result: Result) -> OutcomeLine:
    """How a day's outcome reads: its one alert, or its line."""
    code, detail = post.code, post.detail or str(post.code)
    if result is Result.SKIPPED:
        code, detail = LedgerReason.DAY_ENDED, day_ended_detail(post)
    elif result is Result.RELEASED:
        detail += "; tried again today with backoff, up to MAX_ATTEMPTS"
    fields: dict[str, Any] = {LedgerField.MEMBER.value: claim.subject.member}
    if needs_alert(post, result) and not claim.subject.escalated:
        fields["last_error_code"] = post.code
        return OutcomeLine("error", "", code, detail, True, fields)
    if result in (Result.FAILED, Result.UNCONFIRMED, Result.SKIPPED):
        return OutcomeLine(
            "error",
            f"rotation day {result.value} (alerted earlier)",
            code,
            detail,
            False,
            fields,
        )
    if result is Result.AMBIGUOUS:
        text = "rotation post outcome unknown; held for reconciliation"
        return OutcomeLine("warning", text, code, detail, False, fields)
    if result is Result.RELEASED:
        text = "rotation post not made; rolled back for a retry the same day"
        fields["retry_after"] = post.retry_after
        return OutcomeLine("warning", text, code, detail, False, fields)
    return OutcomeLine("info", "rotation turn delivered", code, detail, False, fields)


def _outcome_writes(
    claim: Claim[DayTurn], post: PostResult, now: datetime, max_attempts: int
) -> Writes:
    turn = claim.subject
    error = StoredError(post.code, post.detail, now)
    if post.outcome is Outcome.DELIVERED:
        rotation = RotationWrite(
            lease=DELETE,
            rollback=DELETE,
            last_error=DELETE,
            last_member=turn.member,
            last_sent_at=now,
            last_slack_ts=post.ts if turn.rotation.platform == SLACK else UNSET,
            sent_count=INCREMENT,
        )
        ledger = sent_write(turn.rotation.platform, post.ts, now)
        return Writes(rotation, ledger, Result.SENT)
    if post.outcome is Outcome.AMBIGUOUS:
        return Writes(RotationWrite(last_error=error), LedgerWrite(error=error), Result.AMBIGUOUS)
    restored = RotationWrite(
        **_restored(turn.rollback), lease=DELETE, rollback=DELETE, last_error=error
    )
    next_turn = turn.rotation.next_due_at(now, after=turn.day)
    if post.outcome is Outcome.FAILED and claim.attempts >= max_attempts:
        # Out of attempts: the day ends failed and the rotation moves on to its next turn
        # day; an edit of the rotation re-opens today (the same ledger entry, attempts + 1).
        ledger = LedgerWrite(status=LedgerStatus.FAILED, error=error)
        return Writes(replace(restored, next_run_at=next_turn), ledger, Result.FAILED)
    if post.outcome is Outcome.RETRY_LATER:
        wait = timedelta(seconds=post.retry_after or DEFAULT_RETRY_AFTER)
    else:
        wait = backoff(claim.attempts)  # an explicit failure (channel_not_found...): 1, 2, 4 min
    retry_at = now + wait
    if retry_at >= turn.rotation.day_ends_at(turn.day):
        # The retry would fall on the next local day, which has a turn of its own: the day
        # ends here, unposted, and the member keeps their place for the next turn.
        ended = replace(error, message=day_ended_detail(post))
        ledger = LedgerWrite(
            status=LedgerStatus.SKIPPED, reason=LedgerReason.DAY_ENDED, error=ended
        )
        closed = replace(restored, last_processed_date=turn.day.isoformat(), next_run_at=next_turn)
        return Writes(closed, ledger, Result.SKIPPED)
    ledger = LedgerWrite(status=LedgerStatus.RELEASED, error=error, retry_at=retry_at)
    return Writes(replace(restored, next_run_at=retry_at), ledger, Result.RELEASED)


def _restored(rollback: dict[str, Any]) -> dict[str, Any]:
    """The rollback's values a give-back restores (those it holds)."""
    return {name.value: rollback[name] for name in RESTORED if name in rollback}
