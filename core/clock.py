"""Time is injected: logic asks a Clock, never the wall clock, so tests can stand on any
instant (a DST day, midnight, the end of a lease) without sleeping."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current instant, timezone-aware UTC."""
        ...

    def sleep(self, seconds: float) -> None:
        """Wait (pacing posts); a test clock just moves on."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class FixedClock:
    """A clock that only moves when told to: the tick's `now` override and tests."""

    def __init__(self, instant: datetime) -> None:
        if instant.tzinfo is None:
            raise ValueError(f"FixedClock needs an aware datetime, got naive {instant!r}")
        self._instant = instant.astimezone(UTC)
        self.slept: list[float] = []

    def now(self) -> datetime:
        return self._instant

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self._instant += timedelta(seconds=seconds)

    def advance(self, delta: timedelta) -> None:
        self._instant += delta

    def set(self, instant: datetime) -> None:
        self._instant = instant.astimezone(UTC)
