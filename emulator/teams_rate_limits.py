"""Teams' rate limits for bots, as sliding windows on the stand-in's clock.

Source: learn.microsoft.com/microsoftteams/platform/bots/how-to/rate-limit (read
2026-12-03): "Per bot per thread limit": a bot's operations in one conversation are limited
to 7 in 1 second, 8 in 2 seconds, 60 in 30 seconds and 1,800 in 3,600 seconds, all at once;
"Per app per tenant limit": 50 requests per second across the tenant. Over any of them
Teams answers HTTP 429 Too Many Requests. All requests count: sends, updates, roster
fetches. The stand-in answers `Retry-After` in whole seconds until every full window frees a
slot (at least 1), and a refused call does not use a slot.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from datetime import datetime, timedelta

Windows = Sequence[tuple[int, float]]
TEAMS_LIMITS: tuple[tuple[int, float], ...] = ((7, 1), (8, 2), (60, 30), (1800, 3600))
TENANT_LIMITS: tuple[tuple[int, float], ...] = ((50, 1),)


def _check(windows: Windows | None) -> tuple[tuple[int, timedelta], ...]:
    checked = []
    for window in windows or ():
        if len(window) != 2:
            raise ValueError(f"a window is (calls, per_seconds), got {window!r}")
        calls, per = window
        if isinstance(calls, bool) or not isinstance(calls, int) or calls < 1:
            raise ValueError(f"calls must be a whole number of at least 1, got {calls!r}")
        if isinstance(per, bool) or not isinstance(per, int | float) or per <= 0:
            raise ValueError(f"per_seconds must be a positive number, got {per!r}")
        checked.append((calls, timedelta(seconds=per)))
    return tuple(checked)


class _Counted:
    """One set of windows, counted apart for each key (a conversation, a tenant)."""

    def __init__(self, windows: Windows | None) -> None:
        self.windows = _check(windows)
        self._admitted: dict[str, deque[datetime]] = {}

    def wait(self, key: str, now: datetime) -> float | None:
        """Seconds until every full window has a free slot; None if none is full."""
        if not self.windows:
            return None
        admitted = self._admitted.setdefault(key, deque())
        longest = max(per for _, per in self.windows)
        while admitted and admitted[0] + longest <= now:
            admitted.popleft()
        waits = []
        for calls, per in self.windows:
            recent = [t for t in admitted if t + per > now]
            if len(recent) >= calls:
                waits.append((recent[-calls] + per - now).total_seconds())
        return max(waits) if waits else None

    def count(self, key: str, now: datetime) -> None:
        if self.windows:
            self._admitted.setdefault(key, deque()).append(now)


class RateLimits:
    def __init__(self) -> None:
        self._conversation = _Counted(TEAMS_LIMITS)
        self._tenant = _Counted(TENANT_LIMITS)

    def set(self, conversation: Windows | None, tenant: Windows | None) -> None:
        """New windows (None or empty: no limit); what was counted is forgotten."""
        checked = _Counted(conversation), _Counted(tenant)
        self._conversation, self._tenant = checked

    def admit(self, conversation: str, tenant: str, now: datetime) -> int | None:
        """None if the call may go ahead (it is counted), else the seconds to Retry-After."""
        base = conversation.split(";", 1)[0]
        waits = [
            w
            for w in (self._conversation.wait(base, now), self._tenant.wait(tenant, now))
            if w is not None
        ]
        if waits:
            return max(1, math.ceil(max(waits)))
        self._conversation.count(base, now)
        self._tenant.count(tenant, now)
        return None
