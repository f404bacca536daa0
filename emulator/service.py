"""What every local stand-in (the emulators, the Slack stand-in) is as a context manager:
running inside a `with` block, and stopped on leaving it however the block ends."""

from __future__ import annotations

import abc
from types import TracebackType
from typing import Self


class Service(abc.ABC):
    @abc.abstractmethod
    def start(self) -> object:
        """Run; raise if it cannot."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Stop and free what it holds; a no-op when it is not running."""

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
