"""One processing pass that sends what is due itself (DISPATCH=inline; processor.publish is
the other): each kind's part in turn (processor.kind_pass), in the order the kinds are handed
in (rotations, few and due at a fixed local time, first); and passes back to back until
idle."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from core.runtime import Runtime
from processor import kind_pass
from processor.abc import Passes
from processor.history_search import HistoryBudget
from processor.installation import check_installation
from processor.outcome import SUMMARY_KEYS
from processor.pacing import POST_INTERVAL
from processor.pass_counts import io_error

Pass = Callable[[Runtime], dict[str, Any]]


def inline_pass(
    rt: Runtime, kinds: Sequence[Passes[Any, Any]], *, dry_run: bool = False
) -> dict[str, Any]:
    """One pass over `kinds`: the summary counts cover every kind together, a kind with a
    `summary_key` repeats its own share under it, and `due` counts what the pass read. One
    kind's part raising (a read that failed, say) is logged and counted in `errors`, and
    the next kinds run all the same. The kinds share one budget of Slack history calls."""
    now = rt.clock.now()
    if not dry_run:
        check_installation(rt)  # while the app is uninstalled, nothing is posted to Slack
    history = HistoryBudget.for_pass(rt)
    summary: dict[str, Any] = {**dict.fromkeys(SUMMARY_KEYS, 0), "due": 0}
    previews: list[dict[str, Any]] = []
    for kind in kinds:
        part = _part(rt, kind, dry_run, history)
        for key in (*SUMMARY_KEYS, "due"):
            summary[key] += part.get(key, 0)
        previews.extend(part.get("previews", ()))
        if kind.summary_key is not None:
            summary[kind.summary_key] = {key: part.get(key, 0) for key in SUMMARY_KEYS}
    summary |= {"dry_run": dry_run, "now": now.isoformat()}
    return summary | {"previews": previews} if dry_run else summary


def _part(
    rt: Runtime, kind: Passes[Any, Any], dry_run: bool, history: HistoryBudget
) -> dict[str, Any]:
    try:
        return kind_pass.run_kind(rt, kind, dry_run=dry_run, history=history)
    except Exception as exc:
        counts: Counter[str] = Counter()
        what = f"the {kind.name}s' part of the pass raised"
        io_error(counts, what, exc, collection=kind.collection)
        return dict(counts)


def until_idle(
    rt: Runtime, one_pass: Pass, go_on: Callable[[], bool] = lambda: True
) -> Iterator[dict[str, Any]]:
    """Passes back to back, each summary as it ends, until one finds nothing due (or
    `go_on` says stop). A pass that found documents due but claimed none is followed by a
    pause of POST_INTERVAL: what is due is other workers' right now (their channels'
    slots), and reading it again at once would only spend reads, the database's and this
    worker's CPU, before a slot can have come."""
    while go_on():
        summary = one_pass(rt)
        yield summary
        if summary["due"] == 0:
            return
        if summary["claimed"] == 0:
            rt.clock.sleep(POST_INTERVAL.total_seconds())
