"""A click answered in time, whatever its work waits on: Slack shows the person an error
when an interaction is not answered within 3 s, and Teams waits only a few seconds on an
invoke. The work (the replay check, the record, the hand-off) runs on a worker thread that
the request waits for at most ANSWER_WITHIN_SECONDS; work still running then (Firestore
slow) is answered anyway and logged. It goes on, and an answer it records is shown by the
next pass."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from core import logs
from interactions.click import Click

# Slack's 3 s, less the network both ways and the framework's own work.
ANSWER_WITHIN_SECONDS = 2.0
# The requests' work; a thread held by a slow call leaves the others free.
WORKERS = ThreadPoolExecutor(max_workers=16, thread_name_prefix="interaction")

_Answer = TypeVar("_Answer")


def in_time(
    work: Callable[[], _Answer],
    late: _Answer,
    click: Callable[[], Click | None],
    **fields: Any,
) -> _Answer:
    """`work`'s answer, or `late` once ANSWER_WITHIN_SECONDS have passed, logged with the
    click the request carries (`click`, parsed only then, for the log)."""
    running = WORKERS.submit(work)
    try:
        return running.result(timeout=ANSWER_WITHIN_SECONDS)
    except TimeoutError:
        clicked = click()
        if clicked is not None:
            fields |= {"delivery_id": clicked.delivery_id, "user": clicked.user}
        logs.error(
            "interaction answered before its work finished; a click that is not then logged"
            " as recorded is lost and can be clicked again",
            **fields,
            status="unconfirmed",
            within_seconds=ANSWER_WITHIN_SECONDS,
        )
        return late
