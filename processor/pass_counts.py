"""A pass's summary counts, which its threads share, and its error lines.

Every change to a pass's counts from a thread of the pass is made under COUNTS_LOCK. An
error is one ERROR line naming what it concerned, and one more in the summary's `errors`."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from core import logs

COUNTS_LOCK = threading.Lock()


def io_error(counts: Counter[str], message: str, exc: Exception, **concerns: Any) -> None:
    """A read or write of the pass failed (a Firestore hiccup): one ERROR line naming what
    it concerned, and one more in the summary's `errors`; the pass goes on, or ends with its
    sends on record."""
    with COUNTS_LOCK:
        counts["errors"] += 1
    logs.error(
        message, status="error", error_code=type(exc).__name__, error_message=str(exc), **concerns
    )


def raised(counts: Counter[str], message_ids: list[str], exc: Exception) -> None:
    """Processing these messages raised: one ERROR line and one error each."""
    with COUNTS_LOCK:
        counts["errors"] += len(message_ids)
    for message_id in message_ids:
        logs.error(
            "processing a message raised",
            message_id=message_id,
            status="error",
            error_code=type(exc).__name__,
            error_message=str(exc),
        )
