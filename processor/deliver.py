"""One document of any kind, end to end: claim -> send -> finalize -> the outcome line.

A pass claims and sends each due document (`claim_and_send`) and records the sends of a
page together (`record_sends`); `deliver` (DISPATCH=pubsub) takes one document at a time
(`deliver_paced`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from core import logs
from core.errors import DocumentError
from core.platform import Outcome, PostResult, posted_fields
from core.runtime import Runtime
from core.store import Snapshot
from processor.abc import A, Claim, Passes
from processor.channel_slots import Slot
from processor.claim import claim_occurrence
from processor.escalate import escalate
from processor.finalize import finalize, finalize_many
from processor.history_search import too_late_to_post
from processor.outcome import Result
from processor.pacing import hold_channel, interval_for, rate_limit_wait


def deliver_paced(
    rt: Runtime, kind: Passes[Any, Any], snap: Snapshot, hold_until: datetime
) -> tuple[Result, Claim[Any] | None]:
    """One due document of `kind`, end to end, for a delivery whose acknowledgement releases
    its channel (DISPATCH=pubsub, an ordered subscription): a rate-limited post is tried
    again under the same claim once Slack's Retry-After has passed, while that is before
    `hold_until`; it returns once the channel may take its next post
    (processor.pacing.hold_channel; ChannelWait when that is too far off)."""
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
    to = claim.kind.destination(claim)
    hold_channel(rt.clock, answered, post.retry_after, interval_for(to.conversation))
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
    kind: Passes[Any, A],
    rt: Runtime,
    snap: Snapshot,
    slots: tuple[Slot, ...] = (),
    *,
    ahead: A | None = None,
) -> Result | Sent:
    """The claim and the send of one due document of `kind`, for a pass that records many
    sends at once (`record_sends`); a Result when nothing was claimed. With `slots`, the
    claim takes the channel's pacing slots too; `ahead`: what the pass read for its page
    (Claims.read_ahead)."""
    claim = claim_occurrence(rt, kind, snap, slots, ahead)
    if not isinstance(claim, Claim):
        return claim
    post = send(rt, claim)  # pragma: SYNCPOINT claimed
    kind.sent(ahead, claim, post.outcome)
    return Sent(claim, post, rt.clock.now())


def record_sends(rt: Runtime, sends: list[Sent]) -> list[Result]:
    """The second half: every send recorded (in one commit when there are several), then
    the one log line per outcome."""
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
        to = claim.kind.destination(claim)
        return rt.to(to).send(to.conversation, rendered, claim.delivery_id)
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
        **posted_fields(claim.kind.destination(claim), post.ts),
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
