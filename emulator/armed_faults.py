"""The faults a stand-in has armed: kept in the order they were injected, the earliest matching
one strikes, and each is spent after its `times` matches (None: never). ArmedFaults is not
thread-safe: a stand-in holds its own lock around it, as InjectsFaults does for its controls."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from emulator.fault_fields import FaultFields

F = TypeVar("F", bound=FaultFields)


@dataclass
class _Armed(Generic[F]):
    fault: F
    remaining: int | None


class ArmedFaults(Generic[F]):
    def __init__(self) -> None:
        self._armed: list[_Armed[F]] = []

    def inject(self, fault: F) -> None:
        self._armed.append(_Armed(fault, fault.times))

    def clear(self) -> None:
        self._armed.clear()

    def take_first(self, matches: Callable[[F], bool]) -> F | None:
        """The earliest armed fault that `matches` this call, counting it; None if none does."""
        for armed in self._armed:
            if not matches(armed.fault):
                continue
            if armed.remaining is not None:
                armed.remaining -= 1
                if armed.remaining == 0:
                    self._armed.remove(armed)
            return armed.fault
        return None


class InjectsFaults(Generic[F]):
    """A stand-in's fault controls, over its `_faults` and under its `_lock`."""

    _lock: AbstractContextManager[Any]
    _faults: ArmedFaults[F]

    def inject(self, fault: F) -> None:
        with self._lock:
            self._faults.inject(fault)

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()
