"""What every local stand-in (the emulators, the Slack and Teams stand-ins) is as a context
manager: running inside a `with` block, and stopped on leaving it however the block ends; and
how a stand-in runs as a process, until SIGINT or SIGTERM."""

from __future__ import annotations

import abc
import signal
import threading
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Self, TypeVar


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


_S = TypeVar("_S", bound=Service)


def run_until_signalled(service: _S, ready: Callable[[_S], None] = lambda _: None) -> None:
    """Start `service`, call `ready` with it (to say where it listens), and run it until the
    process gets SIGINT or SIGTERM; stop it however that ends. The handlers are in place before
    it starts, so a signal while it starts still stops it cleanly."""
    done = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        done.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    with service:
        ready(service)
        done.wait()
