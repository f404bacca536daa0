"""Per-method rate limits in the Slack stand-in: a sliding window on the stand-in's clock.

Slack answers a call beyond a method's limit with HTTP 429, `{"ok": false, "error":
"ratelimited"}` and a `Retry-After` header in whole seconds (docs.slack.dev/apis/web-api/
rate-limits). Limits are per method (tiers), and since 2025 conversations.history for apps
not approved for the Marketplace is 1 request a minute (api.slack.com/changelog/
2025-05-terms-rate-limit-update-and-faq). A refused call does not use up the window.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta


@dataclass
class _Window:
    calls: int
    per: timedelta
    admitted: deque[datetime] = field(default_factory=deque)


class RateLimits:
    def __init__(self) -> None:
        self._windows: dict[str, _Window] = {}

    def set(self, method: str, calls: int | None, per_seconds: float = 60) -> None:
        if calls is None:
            self._windows.pop(method, None)
            return
        if isinstance(calls, bool) or not isinstance(calls, int) or calls < 1:
            raise ValueError(
                f"calls must be a whole number of at least 1 (None: no limit), got {calls!r}"
            )
        if (
            isinstance(per_seconds, bool)
            or not isinstance(per_seconds, int | float)
            or per_seconds <= 0
        ):
            raise ValueError(f"per_seconds must be a positive number, got {per_seconds!r}")
        self._windows[method] = _Window(calls, timedelta(seconds=per_seconds))

    def clear(self) -> None:
        self._windows.clear()

    def admit(self, method: str, now: datetime) -> int | None:
        """None if the call may go ahead (it is counted), else the seconds to Retry-After."""
        window = self._windows.get(method)
        if window is None:
            return None
        while window.admitted and window.admitted[0] + window.per <= now:
            window.admitted.popleft()
        if len(window.admitted) < window.calls:
            window.admitted.append(now)
            return None
        wait = (window.admitted[0] + window.per - now).total_seconds()
        return max(1, math.ceil(wait))
