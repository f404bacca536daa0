"""Rotation days as a kind of send (processor.abc.Kind): what a turn's outcome writes and how
it is reported.

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
- Unverifiable under the `hold` policy: the day stays claimed, `unconfirmed` in the ledger,
  with `rollback` kept so that an operator's release can give the member their turn back.

A day is alerted once (`escalated_at` on its ledger entry), not on every try.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from datetime import date, datetime, timedelta
from typing import Any

from core.documents.deliveries import (
    LedgerField,
    LedgerKind,
    LedgerReason,
    LedgerStatus,
    LedgerWrite,
)
from core.documents.errors import StoredError
from core.documents.leases import LEASE, LeaseField, lease_of, usable_lease
from core.documents.rotations import (
    RESTORED,
    Rollback,
    RotationField,
    RotationStatus,
    RotationWrite,
)
from core.documents.subjects import SubjectWrite
from core.documents.write import DELETE, INCREMENT, UNSET
from core.errors import DocumentError
from core.models import rotation_delivery_id
from core.queues import Queue
from core.rotation import Rotation
from core.runtime import Runtime
from core.slack import DEFAULT_RETRY_AFTER, Outcome, PostResult
from core.store import ROTATIONS, Snapshot
from formatting.buttons import with_actions
from formatting.slack_text import SlackMessage
from processor.abc import (
    Claim,
    ClaimPlan,
    Doc,
    Leased,
    LeaseUnreadable,
    OutcomeLine,
    Settle,
    Writes,
)
from processor.doctor import Finding
from processor.outcome import Result
from processor.reconcile import backoff
from rotations.claim import plan_day
from rotations.day import DayTurn
from rotations.examine import examine_rotation
from rotations.preview import preview_turns
from rotations.render import render_turn
from rotations.settle import rotation_settle_writes


def needs_alert(post: PostResult, result: Result) -> bool:
    """A day outcome a person must hear of: failed, unconfirmed, given back after an explicit
    failure (the bot may need inviting back), or ended unposted. Alerted once per day."""
    return result in (Result.FAILED, Result.UNCONFIRMED, Result.SKIPPED) or (
        result is Result.RELEASED and post.outcome is Outcome.FAILED
    )


def day_ended_detail(post: PostResult) -> str:
    return f"{post.detail or post.code}; the local day ended before another try, not posted"


class RotationDayKind:
    name = LedgerKind.ROTATION
    collection = ROTATIONS
    id_field = LedgerField.ROTATION_ID
    noun = "a claimed rotation day"
    # A claimed day is found by its lease alone, paused or not: it is settled either way.
    queue = Queue(ROTATIONS, (RotationStatus.ACTIVE,), sending=None)
    summary_key: str | None = "rotations"
    fences_subject = True

    def read_ahead(self, rt: Runtime, due: list[Snapshot]) -> None:
        return None

    def plan(self, rt: Runtime, snap: Snapshot, ahead: None) -> ClaimPlan[DayTurn] | Result:
        return plan_day(rt, self, snap)

    def due(
        self, rt: Runtime, now: datetime, limit: int, excluding: Sequence[str] = ()
    ) -> list[Snapshot]:
        # A claimed day (a lease held for a person can outlast the next turn's time) is
        # reconciliation's, not a claim's: left out, so a pass does not count it as due.
        due = self.queue.due(rt.db, now, limit, excluding=excluding, shards=rt.settings.shards)
        return [snap for snap in due if not usable_lease((snap.to_dict() or {}).get(LEASE))]

    def preview(self, rt: Runtime, due: list[Snapshot], now: datetime) -> list[dict[str, Any]]:
        return preview_turns(due, now)

    def sweep(self, rt: Runtime) -> Counter[str]:
        # Nothing: a lease no pass can settle is rejected by the rotation's claim once its
        # next turn is due (rotations.claim.reject_rotation).
        return Counter()

    def examine(self, doc_id: str, data: Doc, now: datetime) -> Finding | None:
        return examine_rotation(doc_id, data, now)

    def held_failed(
        self, doc_id: str, data: Doc, error: StoredError
    ) -> tuple[SubjectWrite, str | None]:
        """The claimed day is given up: `last_processed_date` stays on it, and the order
        goes on with the next turn."""
        day = lease_of(data).get(LeaseField.OCCURRENCE_DATE)
        given_up = RotationWrite(
            lease=DELETE,
            last_error=error,
            rollback=DELETE,
            last_processed_date=day if isinstance(day, str) else UNSET,
        )
        try:
            return given_up, rotation_delivery_id(doc_id, date.fromisoformat(str(day)))
        except ValueError:
            return given_up, None

    def live(self, data: Doc) -> bool:
        return data.get(RotationField.STATUS) in frozenset(RotationStatus)

    def leased(self, subject_id: str, data: dict[str, Any]) -> Leased:
        day = _leased_day(subject_id, data)
        rotation = Rotation.from_document(subject_id, data)
        fields = {LedgerField.OCCURRENCE_DATE.value: day.isoformat()}
        return Leased(rotation.due_at(day), rotation_delivery_id(subject_id, day), fields)

    def taken_over(
        self, subject_id: str, data: dict[str, Any], leased: Leased, entry: dict[str, Any]
    ) -> DayTurn:
        rotation = Rotation.from_document(subject_id, data)
        lease = data.get(LEASE) or {}
        member = str(lease.get(LeaseField.MEMBER) or entry.get(LedgerField.MEMBER))
        day = date.fromisoformat(leased.fields[LedgerField.OCCURRENCE_DATE])
        escalated = entry.get(LedgerField.ESCALATED_AT) is not None
        return DayTurn(rotation, day, member, _rollback(data), escalated)

    def channel(self, claim: Claim[DayTurn]) -> str:
        return claim.subject.rotation.channel

    def render(self, claim: Claim[DayTurn]) -> SlackMessage:
        rotation = claim.subject.rotation
        rendered = render_turn(rotation.text, claim.subject.member)
        return with_actions(rendered, claim.delivery_id, rotation.actions)

    def outcome_writes(
        self, claim: Claim[DayTurn], post: PostResult, now: datetime, max_attempts: int
    ) -> Writes:
        writes = _outcome_writes(claim, post, now, max_attempts)
        if needs_alert(post, writes.result) and not claim.subject.escalated:
            # The day's one alert (outcome_line).
            return writes._replace(ledger=replace(writes.ledger, escalated_at=now))
        return writes

    def unconfirmed_writes(self, claim: Claim[DayTurn], error: StoredError) -> Writes:
        rotation = RotationWrite(lease=DELETE, last_error=error)
        ledger = LedgerWrite(status=LedgerStatus.UNCONFIRMED, error=error)
        return Writes(rotation, ledger, Result.UNCONFIRMED)

    def settle_writes(self, rt: Runtime, action: Settle, entry: Doc, subject: Doc) -> Writes:
        return rotation_settle_writes(rt, action, entry, subject)

    def still_leased(self, claim: Claim[DayTurn], subject: dict[str, Any]) -> bool:
        lease = subject.get(LEASE) or {}
        return bool(
            lease.get(LeaseField.OWNER) == claim.owner
            and lease.get(LeaseField.OCCURRENCE_DATE) == claim.subject.day.isoformat()
        )

    def log_fields(self, claim: Claim[DayTurn]) -> dict[str, Any]:
        return {LedgerField.OCCURRENCE_DATE.value: claim.subject.day.isoformat()}

    def outcome_line(self, claim: Claim[DayTurn], post: PostResult, result: Result) -> OutcomeLine:
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


def _leased_day(subject_id: str, data: dict[str, Any]) -> date:
    """The lease's day, once the rotation is known to parse (LeaseUnreadable otherwise)."""
    try:
        Rotation.from_document(subject_id, data)
        return date.fromisoformat(str((data.get(LEASE) or {}).get(LeaseField.OCCURRENCE_DATE)))
    except (DocumentError, ValueError) as exc:
        code = exc.code if isinstance(exc, DocumentError) else "invalid_lease"
        raise LeaseUnreadable(code, f"a claimed rotation day no longer parses: {exc}") from None


def _rollback(data: dict[str, Any]) -> dict[str, Any]:
    """What giving the day back restores. A lease without `rollback` (one repaired from
    its ledger entry before the repair kept it) restores the order as it stands and no
    `last_processed_date`, so the day is open again and nothing else is."""
    rollback = data.get(RotationField.ROLLBACK)
    if isinstance(rollback, dict):
        return rollback
    return Rollback(
        None, data.get(RotationField.CURSOR, 0), data.get(RotationField.MEMBERS)
    ).to_document()


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
            last_slack_ts=post.ts,
            sent_count=INCREMENT,
        )
        ledger = LedgerWrite(status=LedgerStatus.SENT, slack_ts=post.ts, sent_at=now)
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


ROTATION_DAY_KIND = RotationDayKind()
