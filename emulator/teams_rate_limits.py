"""Teams' per bot per conversation rate limits, as sliding windows on the stand-in's clock.

Source: learn.microsoft.com/microsoftteams/platform/bots/how-to/rate-limit, "Per bot per
thread limit" (read 2026-12-03): a bot's operations in one conversation are limited to 7 in
1 second, 8 in 2 seconds, 60 in 30 seconds and 1,800 in 3,600 seconds, all at once; over
any of them Teams answers HTTP 429 Too Many Requests. All requests count: sends, updates,
roster fetches. The stand-in answers `Retry-After` in whole seconds until the first window
frees a slot (at least 1), and a refused call does not use a slot.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from datetime import datetime, timedelta

TEAMS_LIMITS: tuple[tuple[int, float], ...] = ((7, 1), (8, 2), (60, 30), (1800, 3600))


def _check(windows: Sequence[tuple[int, float]]) -> tuple[tuple[int, timedelta], ...]:
    checked = []
    for window in windows:
        if len(window) != 2:
            raise ValueError(f"a window is (calls, per_seconds), got {window!r}")
        calls, per = window
        if isinstance(calls, bool) or not isinstance(calls, int) or calls < 1:
            raise ValueError(f"calls must be a whole number of at least 1, got {calls!r}")
        if isinstance(per, bool) or not isinstance(per, int | float) or per <= 0:
            raise ValueError(f"per_seconds must be a positive number, got {per!r}")
        checked.append((calls, timedelta(seconds=per)))
    return tuple(checked)


class ConversationLimits:
    """The same windows for every conversation, each conversation counted apart."""

    def __init__(self, windows: Sequence[tuple[int, float]] | None = TEAMS_LIMITS) -> None:
        self._windows = _check(windows or ())
        self._admitted: dict[str, deque[datetime]] = {}

    def set(self, windows: Sequence[tuple[int, float]] | None) -> None:
        """New windows (None or empty: no limit); what was counted is forgotten."""
        self._windows = _check(windows or ())
        self._admitted.clear()

    def clear(self) -> None:
        self._admitted.clear()

    def admit(self, conversation: str, now: datetime) -> int | None:
        """None if the call may go ahead (it is counted), else the seconds to Retry-After."""
        if not self._windows:
            return None
        base = conversation.split(";", 1)[0]
        admitted = self._admitted.setdefault(base, deque())
        longest = max(per for _, per in self._windows)
        while admitted and admitted[0] + longest <= now:
            admitted.popleft()
        waits = []
        for calls, per in self._windows:
            recent = [t for t in admitted if t + per > now]
            if len(recent) >= calls:
                waits.append((recent[-calls] + per - now).total_seconds())
        if waits:
            return max(1, math.ceil(max(waits)))
        admitted.append(now)
        return None
