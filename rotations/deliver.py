"""One rotation day, end to end: claim -> post the turn -> record what happened."""

from __future__ import annotations

from typing import Any

from core import logs
from core.errors import DocumentError
from core.rotation import fill_template
from core.runtime import Runtime
from core.slack import Outcome, PostResult
from core.store import Snapshot
from formatting.slack_text import SlackMessage, to_slack
from processor.channel_slots import Slot
from processor.escalate import escalate
from processor.history_search import too_late_to_post
from processor.outcome import Result
from rotations.claim import DayClaim, claim_day
from rotations.finalize import day_ended_detail, finalize_day, needs_alert
from rotations.missed_days import DAY_ENDED


def deliver_day(
    rt: Runtime, snap: Snapshot, slots: tuple[Slot, ...] = ()
) -> tuple[Result, DayClaim | None]:
    """What happened, and this worker's claim of the day if it made one (with `slots`, the
    claim took the channel's pacing slots too)."""
    claim = claim_day(rt, snap, slots)
    if not isinstance(claim, DayClaim):
        return claim, None
    post = post_turn(rt, claim)  # pragma: SYNCPOINT claimed
    result = finalize_day(rt, claim, post)
    report_day(rt, claim, post, result)
    return result, claim


def render_turn(text: str, member: str) -> SlackMessage:
    """The turn's message: the template with the member's mention, formatted like every
    other message (and never a broadcast)."""
    return to_slack(fill_template(text, member), allow_broadcast=False)


def post_turn(rt: Runtime, claim: DayClaim) -> PostResult:
    late = too_late_to_post(rt, claim.post_by)
    if late is not None:
        return late
    try:
        rendered = render_turn(claim.rotation.text, claim.member)
    except DocumentError as exc:
        return PostResult(Outcome.FAILED, exc.code, detail=exc.message)
    try:
        return rt.slack.post(
            claim.rotation.channel, rendered.text, claim.delivery_id, blocks=rendered.blocks
        )
    except Exception as exc:
        # Our own code failed after the claim: it may have posted, so this is ambiguous and
        # stays claimed for reconciliation, never a day silently claimed and not sent.
        return PostResult(Outcome.AMBIGUOUS, "internal_exception", detail=repr(exc))


def report_day(rt: Runtime, claim: DayClaim, post: PostResult, result: Result) -> None:
    """The one log line per rotation-day outcome; the day's first outcome a person must
    hear of (finalize.needs_alert) is escalated, later ones only logged."""
    if result is Result.FENCED:
        return  # the late result was logged where it was dropped
    fields: dict[str, Any] = {
        "delivery_id": claim.delivery_id,
        "occurrence_date": claim.day.isoformat(),
        "member": claim.member,
        "attempt": claim.attempts,
        "channel": claim.rotation.channel,
        "slack_ts": post.ts,
    }
    code, detail = post.code, post.detail or str(post.code)
    if result is Result.SKIPPED:
        code, detail = DAY_ENDED, day_ended_detail(post)
    elif result is Result.RELEASED:
        detail += "; tried again today with backoff, up to MAX_ATTEMPTS"
    if needs_alert(post, result) and not claim.escalated:
        escalate(
            rt,
            status=result.value,
            rotation_id=claim.rotation.id,
            occurrence_at=claim.due_at,
            error_code=code,
            detail=detail,
            last_error_code=post.code,
            **fields,
        )
        return
    fields |= {
        "rotation_id": claim.rotation.id,
        "occurrence_at": claim.due_at,
        "status": result.value,
        "error_code": code,
    }
    if result in (Result.FAILED, Result.UNCONFIRMED, Result.SKIPPED):
        logs.error(f"rotation day {result.value} (alerted earlier)", **fields)
    elif result is Result.AMBIGUOUS:
        logs.warning("rotation post outcome unknown; held for reconciliation", **fields)
    elif result is Result.RELEASED:
        logs.warning(
            "rotation post not made; rolled back for a retry the same day",
            retry_after=post.retry_after,
            **fields,
        )
    else:
        logs.info("rotation turn delivered", **fields)
