"""One document, end to end: claim -> send -> finalize.

This is the per-document operation. The tick calls it in-process for each due message; a
Pub/Sub-triggered function can call it with one document when a single tick no longer
suffices."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core import logs
from core.errors import DocumentError
from core.runtime import Runtime
from core.slack import Outcome, PostResult
from core.store import Snapshot
from formatting.slack_text import to_slack
from processor.channel_slots import Slot
from processor.claim import Claim, claim_message
from processor.escalate import escalate
from processor.finalize import finalize, finalize_many
from processor.history_search import too_late_to_post
from processor.outcome import Result


def deliver_message(rt: Runtime, snap: Snapshot) -> tuple[Result, bool]:
    """Returns what happened and whether this worker claimed the occurrence."""
    claim = claim_message(rt, snap)
    if not isinstance(claim, Claim):
        return claim, False
    post = send(rt, claim)  # pragma: SYNCPOINT claimed
    result = finalize(rt, claim, post)
    report_outcome(rt, claim, post, result)
    return result, True


@dataclass(frozen=True)
class Sent:
    """A claimed occurrence whose send is done but not yet recorded."""

    claim: Claim
    post: PostResult
    # When Slack answered the post: a channel's next post is paced from here. The post
    # reached Slack before its answer, so the next one, an interval later, reaches it at
    # least an interval after this one did, however long either spent on the way.
    answered_at: datetime | None = None


def claim_and_send(rt: Runtime, snap: Snapshot, slots: tuple[Slot, ...] = ()) -> Result | Sent:
    """The first half of `deliver_message`, for a pass that records many sends at once
    (`record_sends`); a Result when nothing was claimed. With `slots`, the claim takes the
    channel's pacing slots too."""
    claim = claim_message(rt, snap, slots)
    if not isinstance(claim, Claim):
        return claim
    post = send(rt, claim)
    return Sent(claim, post, rt.clock.now())


def record_sends(rt: Runtime, sends: list[Sent]) -> list[Result]:
    """The second half: every send recorded (in one commit when there are several), then
    the one log line per outcome. A lone send is recorded exactly as `deliver_message`
    records it."""
    if len(sends) == 1:
        results = [finalize(rt, sends[0].claim, sends[0].post)]
    else:
        results = finalize_many(rt, [(s.claim, s.post) for s in sends])
    for sent, result in zip(sends, results, strict=True):
        report_outcome(rt, sent.claim, sent.post, result)
    return results


def send(rt: Runtime, claim: Claim) -> PostResult:
    late = too_late_to_post(rt, claim.post_by)
    if late is not None:
        return late
    try:
        rendered = to_slack(claim.message.text, allow_broadcast=claim.message.allow_broadcast)
    except DocumentError as exc:
        # Nothing was posted: a text we cannot render is a definitive failure.
        return PostResult(Outcome.FAILED, exc.code, detail=exc.message)
    try:
        return rt.slack.post(
            claim.message.channel, rendered.text, claim.delivery_id, blocks=rendered.blocks
        )
    except Exception as exc:
        # Our own code failed after the claim: we cannot be sure nothing left, so this is
        # ambiguous like a dropped connection, never a silent loss.
        return PostResult(Outcome.AMBIGUOUS, "internal_exception", detail=repr(exc))


def report_outcome(rt: Runtime, claim: Claim, post: PostResult, result: Result) -> None:
    """The one log line per delivery outcome (and the escalation of a failure)."""
    if result is Result.FENCED:
        return  # finalize already logged the dropped late result
    fields: dict[str, Any] = {
        "delivery_id": claim.delivery_id,
        "attempt": claim.attempts,
        "channel": claim.message.channel,
        "slack_ts": post.ts,
    }
    if result in (Result.FAILED, Result.UNCONFIRMED):
        escalate(
            rt,
            status=result.value,
            message_id=claim.message.id,
            occurrence_at=claim.occurrence_at,
            error_code=post.code,
            detail=post.detail,
            **fields,
        )
        return
    fields |= {
        "message_id": claim.message.id,
        "occurrence_at": claim.occurrence_at,
        "status": result.value,
        "error_code": post.code,
    }
    if result is Result.AMBIGUOUS:
        logs.warning("delivery outcome unknown; held for reconciliation", **fields)
    elif result is Result.RELEASED:
        logs.warning(
            "delivery not made; released for retry", retry_after=post.retry_after, **fields
        )
    else:
        logs.info("delivered", **fields)
