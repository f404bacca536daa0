"""The kinds of send, in the order a pass takes them (rotations, few and due at a fixed local
time, first; events, sent by their first caller's request, are only retried and reconciled
by a pass), and a pass over them: what every target hands the pipeline. DISPATCH picks
who sends: the pass itself (`inline`), or `deliver`, one Pub/Sub message per due document
(`pubsub`, processor.scan)."""

from __future__ import annotations

from typing import Any

from core import logs
from core.runtime import Runtime
from core.settings import PUBSUB
from events.kind import EVENT_KIND
from interactions.show import Shown, show_pending
from messages.kind import MESSAGE_KIND
from processor.abc import AnyKind
from processor.one_pass import inline_pass
from processor.scan import scan_pass
from rotations.kind import ROTATION_DAY_KIND

KINDS: tuple[AnyKind, ...] = (ROTATION_DAY_KIND, MESSAGE_KIND, EVENT_KIND)
KINDS_BY_NAME: dict[str, AnyKind] = {kind.name: kind for kind in KINDS}


def run_pass(rt: Runtime, *, dry_run: bool = False) -> dict[str, Any]:
    """One pass. A dry run is the same under either dispatcher: what is due, previewed.
    A real pass then retries the Slack updates of answers not shown yet (interactions.show)."""
    if rt.settings.dispatch == PUBSUB and not dry_run:
        counts = scan_pass(rt, KINDS)
    else:
        counts = inline_pass(rt, KINDS, dry_run=dry_run)
    if not dry_run:
        _show_pending_answers(rt, counts)
    return counts


def _show_pending_answers(rt: Runtime, counts: dict[str, Any]) -> None:
    """The sends are done and counted: a failure here is logged, never the pass's answer."""
    try:
        shown = show_pending(rt)
    except Exception as exc:
        logs.error("showing answers failed", error_code=type(exc).__name__, error_message=str(exc))
        return
    for key in (Shown.ALL.value, Shown.ENDED.value):
        if shown[key]:
            counts[key] = shown[key]
