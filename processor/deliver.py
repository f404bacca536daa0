"""One document of any kind, end to end: claim -> send -> finalize -> the outcome line.

This is the per-document operation. A pass calls it in-process for each due document; a
Pub/Sub-triggered function can call it with one document when a single tick no longer
suffices."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from core import logs
from core.errors import DocumentError
from core.runtime import Runtime
from core.slack import Outcome, PostResult
from core.store import Snapshot
from processor.abc import Claim, Passes
from processor.channel_slots import Slot
from processor.claim import claim_occurrence
from processor.escalate import escalate
from processor.finalize import finalize, finalize_many
from processor.gates import Gates
from processor.history_search import too_late_to_post
from processor.outcome import Result
from processor.pacing import hold_channel, rate_limit_wait


def deliver_one(
    rt: Runtime, kind: Passes[Any, Any], snap: Snapshot, slots: tuple[Slot, ...] = ()
) -> tuple[Result, Claim[Any] | None]:
    """One due document of `kind`, end to end: what happened, and this worker's claim if it
    made one (with `slots`, the claim took the channel's pacing slots too)."""
    claim = claim_occurrence(rt, kind, snap, slots)
    if not isinstance(claim, Claim):
        return claim, None
    post = send(rt, claim)  # pragma: SYNCPOINT claimed
    result = finalize(rt, claim, post)
    report_outcome(rt, claim, post, result)
    return result, claim


def deliver_paced(
    rt: Runtime, kind: Passes[Any, Any], snap: Snapshot, hold_until: datetime
) -> tuple[Result, Claim[Any] | None]:
    """`deliver_one` for a delivery whose acknowledgement releases its channel (DISPATCH=pubsub,
    an ordered subscription): a rate-limited post is tried again under the same claim once
    Slack's Retry-After has passed, while that is before `hold_until`; it returns once the
    channel may take its next post (processor.pacing.hold_channel; ChannelWait when that is
    too far off)."""
    claim = claim_occurrence(rt, kind, snap)
    if not isinstance(claim, Claim):
        return claim, None
    post = send(rt, claim)
    while (wait := _held_wait(rt, claim, post, hold_until)) is not None:
        rt.clock.sleep(wait.total_seconds())
        post = send(rt, claim)
    answered = rt.clock.now()
    result = finalize(rt, claim, post)
    report_outcome(rt, claim, post, result)
    hold_channel(rt.clock, answered, post.retry_after)
    return result, claim


def _held_wait(
    rt: Runtime, claim: Claim[Any], post: PostResult, hold_until: datetime
) -> timedelta | None:
    """Slack's Retry-After for a rate-limited post, if the delivery can wait it out: before
    `hold_until` and before the claim's post deadline."""
    wait = rate_limit_wait(post)
    if wait is None:
        return None
    ready = rt.clock.now() + wait
    latest = hold_until if claim.post_by is None else min(hold_until, claim.post_by)
    return wait if ready <= latest else None


@dataclass(frozen=True)
class Sent:
    """A claimed occurrence whose send is done but not yet recorded."""

    claim: Claim[Any]
    post: PostResult
    # When Slack answered the post: a channel's next post is paced from here. The post
    # reached Slack before its answer, so the next one, an interval later, reaches it at
    # least an interval after this one did, however long either spent on the way.
    answered_at: datetime | None = None


def claim_and_send(
    kind: Passes[Any, Any],
    rt: Runtime,
    snap: Snapshot,
    slots: tuple[Slot, ...] = (),
    *,
    ahead: object = None,
) -> Result | Sent:
    """The first half of `deliver_one`, for a pass that records many sends at once
    (`record_sends`); a Result when nothing was claimed. With `slots`, the claim takes the
    channel's pacing slots too; `ahead`: what the pass read for its page (Kind.read_ahead)."""
    claim = claim_occurrence(rt, kind, snap, slots, ahead)
    if not isinstance(claim, Claim):
        return claim
    post = send(rt, claim)
    if isinstance(ahead, Gates):  # a give-back is seen by the rest of the pass at once
        ahead.sent(claim.subject, claim.delivery_id, post.outcome)
    return Sent(claim, post, rt.clock.now())


def record_sends(rt: Runtime, sends: list[Sent]) -> list[Result]:
    """The second half: every send recorded (in one commit when there are several), then
    the one log line per outcome. A lone send is recorded exactly as `deliver_one`
    records it."""
    if len(sends) == 1:
        results = [finalize(rt, sends[0].claim, sends[0].post)]
    else:
        results = finalize_many(rt, [(s.claim, s.post) for s in sends])
    for sent, result in zip(sends, results, strict=True):
        report_outcome(rt, sent.claim, sent.post, result)
    return results


def send(rt: Runtime, claim: Claim[Any]) -> PostResult:
    """Post the claim's message, whatever its kind; what the post did."""
    late = too_late_to_post(rt, claim.post_by)
    if late is not None:
        return late
    try:
        rendered = claim.kind.render(claim)
    except DocumentError as exc:
        # Nothing was posted: a text we cannot render is a definitive failure.
        return PostResult(Outcome.FAILED, exc.code, detail=exc.message)
    try:
        return rt.slack.post(
            claim.kind.channel(claim), rendered.text, claim.delivery_id, blocks=rendered.blocks
        )
    except Exception as exc:
        # Our own code failed after the claim: we cannot be sure nothing left, so this is
        # ambiguous like a dropped connection, never a silent loss.
        return PostResult(Outcome.AMBIGUOUS, "internal_exception", detail=repr(exc))


def report_outcome(rt: Runtime, claim: Claim[Any], post: PostResult, result: Result) -> None:
    """The one log line per delivery outcome, worded by the claim's kind; an outcome a
    person must hear of is escalated (an ERROR line and an alert) instead."""
    if result is Result.FENCED:
        return  # finalize already logged the dropped late result
    line = claim.kind.outcome_line(claim, post, result)
    subject = {claim.kind.id_field: claim.subject_id}
    fields: dict[str, Any] = {
        "delivery_id": claim.delivery_id,
        **claim.kind.log_fields(claim),
        "attempt": claim.attempts,
        "channel": claim.kind.channel(claim),
        "slack_ts": post.ts,
        **line.fields,
    }
    if line.alert:
        escalate(
            rt,
            status=result.value,
            occurrence_at=claim.occurrence_at,
            error_code=line.code,
            detail=line.detail,
            **subject,
            **fields,
        )
        return
    fields |= subject | {
        "occurrence_at": claim.occurrence_at,
        "status": result.value,
        "error_code": line.code,
    }
    getattr(logs, line.level)(line.message, **fields)
