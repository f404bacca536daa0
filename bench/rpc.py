"""Counting Firestore RPCs honestly: a gRPC client interceptor on the client's own channel.

Every unary call (Commit, BatchWrite, Rollback, BeginTransaction...) and every streaming
call (RunQuery, BatchGetDocuments) is one RPC, whatever the client library does above it
(transaction retries included). Documents are counted as they stream back, so a query's
reads are visible too.

Beside the RPCs, Firestore's billing units (https://cloud.google.com/firestore/pricing,
read 2026-12-01): a document read for every document a query or a get returns, and one for
a query that returns none (Firestore's minimum charge per query); a get of a document that
does not exist is counted as one read too; a document write for every write of a commit
that succeeded (set, update, create, each member of a batch; a field transform is part of
its write), and deletes apart. A commit refused (a failed precondition, a lost claim race)
wrote nothing: its writes are counted as `refused_writes`, not billed."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import grpc  # type: ignore[import-untyped]
from google.cloud import firestore

BILLING_UNITS = ("reads", "writes", "deletes", "refused_writes")


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
        # Billing units (module docstring): reads, writes, deletes, and refused writes.
        self.billing: Counter[str] = Counter()
        # Billed document reads and applied writes by collection id, from the document names
        # streamed back (a get of a missing document is a read of its collection) and those a
        # commit names: what the people's gates cost, read by read (bench.people).
        self.reads_by_collection: Counter[str] = Counter()
        self.writes_by_collection: Counter[str] = Counter()

    def _count(self, method: str) -> None:
        with self._lock:
            self.calls[method.rsplit("/", 1)[-1]] += 1

    def intercept_unary_unary(
        self, continuation: Callable[..., Any], details: Any, request: Any
    ) -> Any:
        self._count(details.method)
        outcome = continuation(details, request)
        self._bill_writes(details.method, request, outcome)
        return outcome

    def _bill_writes(self, method: str, request: Any, outcome: Any) -> None:
        """Commit and BatchWrite: the documents written or deleted, once the call answered."""
        name = method.rsplit("/", 1)[-1]
        if name not in ("Commit", "BatchWrite"):
            return
        writes = list(getattr(getattr(request, "_pb", request), "writes", []))
        if name == "BatchWrite" and outcome.exception() is None:
            statuses = list(outcome.result().status)
            applied = [w for w, s in zip(writes, statuses, strict=False) if s.code == 0]
        else:
            applied = writes if outcome.exception() is None else []
        deletes = sum(1 for w in applied if w.WhichOneof("operation") == "delete")
        written = Counter(_collection(w.update.name) for w in applied if w.HasField("update"))
        with self._lock:
            self.writes_by_collection.update(written)
            self.billing["writes"] += len(applied) - deletes
            self.billing["deletes"] += deletes
            self.billing["refused_writes"] += len(writes) - len(applied)

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

    def add_reads(self, n: int, name: str | None = None) -> None:
        """Billed document reads (module docstring); `name`: the document read, if one was."""
        with self._lock:
            self.billing["reads"] += n
            if name is not None:
                self.reads_by_collection[_collection(name)] += n

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
            self.billing.clear()
            self.reads_by_collection.clear()
            self.writes_by_collection.clear()

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "calls": dict(self.calls),
                "total": sum(self.calls.values()),
                "documents": self.documents,
                "documents_by": dict(self.documents_by),
                "stream_seconds": {k: round(v, 3) for k, v in self.stream_seconds.items()},
                "billing": {k: self.billing[k] for k in BILLING_UNITS},
                "reads_by_collection": dict(self.reads_by_collection),
                "writes_by_collection": dict(self.writes_by_collection),
            }


class _CountedStream:
    """The stream the client iterates, counting documents in RunQuery/BatchGet answers. It
    forwards everything else (cancel, code...) to the real call object."""

    def __init__(self, call: Any, counter: RpcCounter, method: str, started: float) -> None:
        self._call = call
        self._counter = counter
        self._method = method
        self._started: float | None = started
        self._returned = 0  # documents this stream returned (a query of none bills one)

    def __iter__(self) -> Iterator[Any]:
        return self

    def __next__(self) -> Any:
        try:
            response = next(self._call)
        except StopIteration:
            if self._started is not None and self._method.endswith("/RunQuery"):
                self._counter.add_reads(0 if self._returned else 1)
            self._ended()
            raise
        except BaseException:
            self._ended()
            raise
        raw = getattr(response, "_pb", response)
        has = getattr(raw, "HasField", None)
        found = [f for f in ("document", "found") if has is not None and _has(has, f)]
        if found:
            self._counter.add_documents(1, self._method)
            self._returned += 1
            self._counter.add_reads(1, getattr(raw, found[0]).name)
        elif has is not None and _has(has, "missing"):
            # A get of a document that does not exist (BatchGet names it in `missing`).
            self._counter.add_reads(1, raw.missing)
        return response

    def _ended(self) -> None:
        if self._started is not None:
            self._counter.add_stream_seconds(time.perf_counter() - self._started, self._method)
            self._started = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._call, name)


def _collection(name: str) -> str:
    """The collection id of a document's full name (.../documents/{collection}/{id})."""
    parts = name.rsplit("/", 2)
    return parts[-2] if len(parts) == 3 else "?"


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
