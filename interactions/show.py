"""The Slack message shows its answers: a chat.update of the original post (found through
the ledger: channel and slack_ts) with a line per answer, labels from the catalog the post
was sent with (interactions.posted).

Each answer is created `pending_update: true`, and the click is answered before any update
(interactions.target). The marker is removed once an update that included the answer was
taken by Slack, or, when Slack refuses for good (any error core.slack classes as
definitive, e.g. the post or its channel is gone, archived, too old or too long to edit),
replaced by `not_shown` with Slack's code. Every pass shows the pending
ones oldest first (`show_pending`), within `UPDATES_PER_PASS` chat.update calls; under
DISPATCH=pubsub the click's own Pub/Sub message shows it first (targets.deliver). The
recorded answer itself is never touched. After an update the answers are read again, and a
newer one not yet shown is shown at once, so whichever of two concurrent updates lands
last, the message ends showing both."""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from core import logs
from core.actions import MUTE_CATEGORY, RESERVED, UNMUTE_CATEGORY, Action, find
from core.documents.deliveries import LedgerField, LedgerKind, PinnedPost, entry_post
from core.documents.responses import ResponseField
from core.errors import DocumentError
from core.platform import Outcome
from core.runtime import Runtime
from core.store import RESPONSES, Snapshot
from formatting.render import Rendered, answered, noted, unpinned
from formatting.slack_text import RENDER_VERSION
from interactions.mute import UNDO
from interactions.posted import Posted, read_posted
from rotations.render import handed_on, render_turn

# Updates of one message in one call: enough for the answers that arrive while one is sent.
_ROUNDS = 3
# chat.update calls a pass may make: Slack's Tier 3 is "50+ per minute" per workspace, and
# the tick runs once a minute; 40 leaves room for the clicks' own updates (DISPATCH=pubsub).
UPDATES_PER_PASS = 40
# Pending answers a pass reads, at most, looking for ones it can show; and per query page.
SCAN_LIMIT = 500
_PAGE = 50
# Why an update can never be made, besides Slack's definitive errors (Outcome.FAILED): the
# answers it blocks end `not_shown`. Ours: the ledger entry or its subject's catalog is gone.
NO_CATALOG = "no_catalog"


# Slack rate limiting us, or failing on its side (or not answering in time): this post's
# answers wait for a later pass. A pass stops at a rate limit, or at this many failures in
# a row, so a troubled Slack costs a pass two timeouts, not UPDATES_PER_PASS of them.
_SLACK_TROUBLE = frozenset({Outcome.RETRY_LATER, Outcome.AMBIGUOUS})
_TROUBLE_LIMIT = 2


class Shown(enum.Enum):
    ALL = "answers_shown"  # the post shows every answer
    PENDING = "answers_pending"  # not yet (or not this pass): the next pass tries again
    ENDED = "answers_not_shown"  # Slack refuses for good: ended `not_shown` with its code
    HELD = "answers_held"  # Slack asks us to wait (rate limited, or failing): no more calls


@dataclass
class Budget:
    """chat.update calls left to make."""

    calls: int

    def take(self) -> bool:
        if self.calls <= 0:
            return False
        self.calls -= 1
        return True


def show_answers(rt: Runtime, delivery_id: str, budget: Budget | None = None) -> Shown:
    """Update the delivery's Slack message to show every answer, within `budget`."""
    shown: set[str] = set()
    budget = budget or Budget(_ROUNDS)
    for _ in range(_ROUNDS):
        answers = _answers(rt, delivery_id)
        if {snap.id for snap in answers} <= shown:
            return Shown.ALL
        result = _update(rt, delivery_id, answers, budget)
        if result is not Shown.ALL:
            return result
        shown = {snap.id for snap in answers}
        batch = rt.db.batch()
        for snap in answers:
            if _field(snap, ResponseField.PENDING_UPDATE) is not None:
                done = {ResponseField.PENDING_UPDATE.value, ResponseField.UPDATE_ERROR.value}
                batch.update(snap.reference, dict.fromkeys(done, firestore.DELETE_FIELD))
        batch.commit()
    return Shown.PENDING


def show_pending(rt: Runtime, budget: Budget | None = None) -> Counter[str]:
    """The pass's sweep: the deliveries with an answer still `pending_update`, in the order
    of their oldest such answer, each updated until `budget` (UPDATES_PER_PASS) is spent,
    Slack asks to wait (`ratelimited`: the transport's wait for chat.update), or Slack fails
    twice in a row (a server error or a timeout: one post Slack keeps failing on does not
    hold the newer ones back, and an outage costs a pass two timeouts). Counts deliveries
    by `Shown` value."""
    budget = budget or Budget(UPDATES_PER_PASS)
    counts: Counter[str] = Counter()
    seen: set[str] = set()
    troubled = 0  # Slack's failures in a row
    for snap in _pending_oldest_first(rt):
        delivery_id = str(_field(snap, ResponseField.DELIVERY_ID))
        if delivery_id in seen:
            continue
        seen.add(delivery_id)
        if rt.slack.edit_waiting_until() is not None:
            break  # Slack's Retry-After (from this pass or an earlier one) is not over
        result = show_answers(rt, delivery_id, budget)
        counts[result.value] += 1
        troubled = troubled + 1 if result is Shown.HELD else 0
        if troubled >= _TROUBLE_LIMIT or budget.calls <= 0:
            break
    return counts


def _pending_oldest_first(rt: Runtime) -> Iterator[Snapshot]:
    """Pending answers by `answered_at` (then id), paged with a cursor, at most SCAN_LIMIT."""
    query = (
        rt.db.collection(RESPONSES)
        .where(filter=FieldFilter(ResponseField.PENDING_UPDATE, "==", True))
        .order_by(ResponseField.ANSWERED_AT.value)
        .limit(_PAGE)
    )
    last: Snapshot | None = None
    for _ in range(SCAN_LIMIT // _PAGE):
        page = list((query if last is None else query.start_after(last)).stream())
        yield from page
        if len(page) < _PAGE:
            return
        last = page[-1]


def _answers(rt: Runtime, delivery_id: str) -> list[Snapshot]:
    query = rt.db.collection(RESPONSES).where(
        filter=FieldFilter(ResponseField.DELIVERY_ID, "==", delivery_id)
    )
    return sorted(
        query.stream(), key=lambda snap: (str(_field(snap, ResponseField.ANSWERED_AT)), snap.id)
    )


def _update(rt: Runtime, delivery_id: str, answers: list[Snapshot], budget: Budget) -> Shown:
    posted = read_posted(rt, delivery_id)
    if posted is None:
        return _failed(delivery_id, answers, NO_CATALOG, final=True)
    platform, channel, ts = entry_post(posted.ledger)
    if not (isinstance(channel, str) and isinstance(ts, str)):
        return _failed(delivery_id, answers, "not_posted_yet")  # not recorded yet: next pass
    try:
        plain = [snap for snap in answers if _field(snap, ResponseField.ACTION_ID) not in RESERVED]
        pairs = _labelled(plain, posted.actions)
        closed = posted.one_answer and bool(pairs)
        base, actions = _muted(_rendered(posted), posted.actions, answers)
        shown = answered(base, delivery_id, actions, pairs, closed=closed)
    except DocumentError as exc:
        return _failed(delivery_id, answers, exc.code)
    if rt.platform(platform).edit_waiting_until() is not None or not budget.take():
        return Shown.PENDING  # its platform's Retry-After is not over, or the pass's budget
    result = rt.platform(platform).edit(channel, ts, shown, delivery_id)
    if result.outcome is not Outcome.DELIVERED:
        # Slack refused for good (its post or channel gone, archived, too old...): retried,
        # it would be refused every pass, and spend the budget newer answers need.
        final = result.outcome is Outcome.FAILED
        failed = _failed(delivery_id, answers, result.code or "update_failed", final=final)
        return Shown.HELD if result.outcome in _SLACK_TROUBLE else failed
    logs.info("answers shown", delivery_id=delivery_id, answers=len(pairs))
    return Shown.ALL


def _rendered(posted: Posted) -> Rendered:
    """The post as it was sent, buttons left out: the rendered post its entry pinned
    (interactions.posted); a rotation day's naming the member who takes the turn now
    (interactions.skip may have handed it on). DocumentError `no_pinned_post` when the
    entry pins none: its text never rendered, so its claim posted nothing."""
    post = posted.post
    if post is None:
        raise DocumentError("no_pinned_post", "the entry pins no rendered post")
    if posted.kind is LedgerKind.ROTATION:
        member = str(posted.ledger.get(LedgerField.MEMBER))
        if post.member is not None and post.member != member:
            return _handed_on(posted, post, member)
    return unpinned(post)


def _handed_on(posted: Posted, post: PinnedPost, new: str) -> Rendered:
    """A rotation day's post after a skip, naming `new`: its template rendered for `new` when
    today's formatter is the one that rendered the post (RENDER_VERSION), so the words are
    the same; else the pinned post with the mention of the member it named made `new`'s
    (rotations.render.handed_on), unless the template names that member itself: then
    today's formatter."""
    if posted.text is None:
        raise DocumentError("no_pinned_template", "the rotation day pins no template")
    if posted.render_version != RENDER_VERSION and post.member:
        swapped = handed_on(unpinned(post), posted.text, post.member, new)
        if swapped is not None:
            return swapped
    return render_turn(posted.text, new, posted.platform)


def _muted(
    rendered: Rendered, actions: tuple[Action, ...], answers: list[Snapshot]
) -> tuple[Rendered, tuple[Action, ...]]:
    """The post and its buttons as its person's latest mute click left them
    (interactions.mute): muted, a line saying so and the Undo in place of the mute button;
    unmuted again, a line saying that; never clicked, as sent."""
    mute = find(actions, MUTE_CATEGORY)
    clicks = [_field(s, ResponseField.ACTION_ID) for s in answers]
    latest = next((c for c in reversed(clicks) if c in RESERVED), None)
    if mute is None or latest is None:
        return rendered, actions
    label = mute.label.removeprefix("Mute ")
    if latest == UNMUTE_CATEGORY:
        return noted(rendered, f"You'll get {label} messages again."), actions
    undo = Action(UNMUTE_CATEGORY, UNDO)
    kept = tuple(undo if action is mute else action for action in actions)
    return noted(rendered, f"You won't get {label} messages."), kept


def _labelled(answers: list[Snapshot], actions: tuple[Action, ...]) -> list[tuple[str, Action]]:
    pairs = []
    for snap in answers:
        action = find(actions, str(_field(snap, ResponseField.ACTION_ID)))
        if action is not None:
            pairs.append((str(_field(snap, ResponseField.USER)), action))
    return pairs


def _failed(delivery_id: str, answers: list[Snapshot], code: str, final: bool = False) -> Shown:
    """The pending answers marked with why the update failed; ended `not_shown` when no
    retry can cure it (`final`; one log line either way)."""
    pending = [snap for snap in answers if _field(snap, ResponseField.PENDING_UPDATE) is True]
    if not final:
        for snap in pending:
            snap.reference.update({ResponseField.UPDATE_ERROR.value: code})
        logs.warning(
            "answers not shown yet; retried on the next pass",
            delivery_id=delivery_id,
            error_code=code,
        )
        return Shown.PENDING
    ended = {
        ResponseField.PENDING_UPDATE.value: firestore.DELETE_FIELD,
        ResponseField.UPDATE_ERROR.value: firestore.DELETE_FIELD,
        ResponseField.NOT_SHOWN.value: code,
    }
    for snap in pending:
        snap.reference.update(ended)
    logs.warning(
        "answers not shown: the post cannot be updated; they stay recorded",
        delivery_id=delivery_id,
        error_code=code,
        answers=len(pending),
        status="not_shown",
    )
    return Shown.ENDED


def _field(snap: Snapshot, field: ResponseField) -> Any:
    return (snap.to_dict() or {}).get(field)
