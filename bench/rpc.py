"""Counting Firestore RPCs honestly: a gRPC client interceptor on the client's own channel.

Every unary call (Commit, BatchWrite, Rollback, BeginTransaction...) and every streaming
call (RunQuery, BatchGetDocuments) is one RPC, whatever the client library does above it
(transaction retries included). Documents are counted as they stream back, so a query's
reads are visible too."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import grpc  # type: ignore[import-untyped]
from google.cloud import firestore


class RpcCounter(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):  # type: ignore[misc]
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.calls: Counter[str] = Counter()
        self.documents = 0
        # Documents read, by the RPC that read them (RunQuery: queries; BatchGetDocuments:
        # gets, e.g. the channel pacing slots).
        self.documents_by: Counter[str] = Counter()
        # Wall seconds from a streaming call's start to its last answer, by RPC: how long the
        # queries took, told apart from the rest of a pass (meaningful for sequential calls).
        self.stream_seconds: dict[str, float] = {}

    def _count(self, method: str) -> None:
        with self._lock:
            self.calls[method.rsplit("/", 1)[-1]] += 1

    def intercept_unary_unary(
        self, continuation: Callable[..., Any], details: Any, request: Any
    ) -> Any:
        self._count(details.method)
        return continuation(details, request)

    def intercept_unary_stream(
        self, continuation: Callable[..., Any], details: Any, request: Any
    ) -> Any:
        self._count(details.method)
        started = time.perf_counter()
        return _CountedStream(continuation(details, request), self, details.method, started)

    def add_documents(self, n: int, method: str = "") -> None:
        with self._lock:
            self.documents += n
            self.documents_by[method.rsplit("/", 1)[-1]] += n

    def add_stream_seconds(self, seconds: float, method: str) -> None:
        with self._lock:
            name = method.rsplit("/", 1)[-1]
            self.stream_seconds[name] = self.stream_seconds.get(name, 0.0) + seconds

    def reset(self) -> None:
        with self._lock:
            self.calls.clear()
            self.documents = 0
            self.documents_by.clear()
            self.stream_seconds.clear()

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "calls": dict(self.calls),
                "total": sum(self.calls.values()),
                "documents": self.documents,
                "documents_by": dict(self.documents_by),
                "stream_seconds": {k: round(v, 3) for k, v in self.stream_seconds.items()},
            }


class _CountedStream:
    """The stream the client iterates, counting documents in RunQuery/BatchGet answers. It
    forwards everything else (cancel, code...) to the real call object."""

    def __init__(self, call: Any, counter: RpcCounter, method: str, started: float) -> None:
        self._call = call
        self._counter = counter
        self._method = method
        self._started: float | None = started

    def __iter__(self) -> Iterator[Any]:
        return self

    def __next__(self) -> Any:
        try:
            response = next(self._call)
        except BaseException:
            if self._started is not None:
                self._counter.add_stream_seconds(time.perf_counter() - self._started, self._method)
                self._started = None
            raise
        raw = getattr(response, "_pb", response)
        has = getattr(raw, "HasField", None)
        if has is not None and any(_has(has, f) for f in ("document", "found")):
            self._counter.add_documents(1, self._method)
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._call, name)


def _has(has: Callable[[str], bool], field: str) -> bool:
    try:
        return has(field)
    except ValueError:  # the message has no such field
        return False


class CountedClient(firestore.Client):
    """firestore.Client whose emulator channel passes through an RpcCounter."""

    def __init__(self, project: str, counter: RpcCounter) -> None:
        super().__init__(project=project)
        self.rpc_counter = counter

    def _emulator_channel(self, transport: Any) -> Any:
        channel = super()._emulator_channel(transport)  # type: ignore[no-untyped-call]
        return grpc.intercept_channel(channel, self.rpc_counter)
