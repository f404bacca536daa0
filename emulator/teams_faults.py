"""Faults the Teams stand-in can inject, validated up front, and the armed list they wait in.

What Teams can answer a bot (learn.microsoft.com/microsoftteams/platform/bots/how-to/
conversations/conversation-messages, "Status codes from bot conversational APIs", and
learn.microsoft.com/microsoftteams/platform/bots/how-to/rate-limit, read 2026-12-03): any
documented status with its `error.code`; 429 with `Retry-After`; 412, 502 and 504, which
Microsoft tells bots to retry, though the message may already be posted (a 502/504 after the
activity was recorded). A client can also time out, or lose the connection, on either side of
the record.

- "error"        status (400-599) and code (required), before the record only: the error body.
- "rate_limit"   retry_after (default 1): 429 `TooManyRequests` with `Retry-After`.
- "server_error" status (5xx, default 502), before or `after_record`.
- "timeout"      delay (seconds, required): the answer waits `delay`; before the record the
                 call then fails 504 unrecorded, `after_record` it is recorded and answered.
- "drop"         the connection closes with no answer; `after_record`: once recorded.

Fault(kind, conversation=None, operation="send", times=None, ...) matches a call of that
operation ("send", "update", "create_conversation", "graph"; None: any) naming that
conversation (None: any; Graph calls name the conversation they read), and is spent after
`times` matches (None: never). When several match, the earliest injected wins.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import ClassVar, Literal

from emulator.armed_faults import ArmedFaults
from emulator.fault_fields import FaultFields
from emulator.http_reply import Reply
from emulator.teams_http import error_reply

FaultKind = Literal["error", "rate_limit", "server_error", "timeout", "drop"]
OPERATIONS = frozenset({"send", "update", "create_conversation", "graph"})
_KIND_FIELDS: dict[str, frozenset[str]] = {
    "error": frozenset({"status", "code"}),
    "rate_limit": frozenset({"retry_after"}),
    "server_error": frozenset({"status"}),
    "timeout": frozenset({"delay"}),
    "drop": frozenset(),
}
AFTER_RECORD_KINDS = frozenset({"server_error", "timeout", "drop"})


@dataclass(frozen=True)
class Fault(FaultFields):
    KIND_FIELDS: ClassVar[Mapping[str, frozenset[str]]] = _KIND_FIELDS

    kind: FaultKind
    conversation: str | None = None
    operation: str | None = "send"
    times: int | None = None
    status: int | None = None
    code: str | None = None
    retry_after: int | None = None
    delay: float | None = None
    after_record: bool = False

    def __post_init__(self) -> None:
        self.check_fields()
        if self.operation is not None and self.operation not in OPERATIONS:
            raise ValueError(f"operation must be one of {sorted(OPERATIONS)} or None")
        if self.kind == "error" and not (self.code and self.status):
            raise ValueError(
                "an error fault needs a status and a code, e.g. 412 PreconditionFailed"
            )
        if self.status is not None and not 400 <= self.status <= 599:
            raise ValueError(f"status must be 4xx or 5xx, got {self.status}")
        if self.kind == "server_error" and self.status is not None and self.status < 500:
            raise ValueError(f"server_error status must be 5xx, got {self.status}")
        if self.kind == "timeout" and (self.delay is None or self.delay <= 0):
            raise ValueError("a timeout fault needs a positive delay in seconds")
        self.check_flag("after_record", AFTER_RECORD_KINDS)
        if self.after_record and self.operation in (None, "graph"):
            raise ValueError("after_record needs a connector operation: Graph records nothing")


class Faults(ArmedFaults[Fault]):
    def take(self, operation: str, conversation: str | None) -> Fault | None:
        """The first fault matching this call, counting it; None if none does. A conversation
        matches with or without its `;messageid=` suffix."""
        base = None if conversation is None else conversation.split(";", 1)[0]

        def matches(fault: Fault) -> bool:
            named = fault.conversation
            return fault.operation in (None, operation) and (
                named is None or named.split(";", 1)[0] == base
            )

        return self.take_first(matches)


_5XX_CODES = {502: "BadGateway", 503: "ServiceUnavailable", 504: "GatewayTimeout"}


def before_record(fault: Fault) -> Reply:
    """What the client gets when the fault strikes before the call took effect."""
    if fault.kind == "error":
        assert fault.status is not None and fault.code is not None
        return error_reply(fault.status, fault.code, f"Injected {fault.code}.")
    if fault.kind == "rate_limit":
        wait = 1 if fault.retry_after is None else fault.retry_after
        return error_reply(
            429, "TooManyRequests", "Too many requests.", (("Retry-After", str(wait)),)
        )
    if fault.kind == "timeout":
        return replace(_server_error(504), delay=fault.delay or 0.0)
    if fault.kind == "drop":
        return Reply(0, b"", drop=True)
    return _server_error(fault.status or 502)


def after_record(fault: Fault, answer: Reply) -> Reply:
    """What the client gets instead of `answer` once the call took effect."""
    if fault.kind == "timeout":
        return replace(answer, delay=fault.delay or 0.0)
    if fault.kind == "drop":
        return Reply(0, b"", drop=True)
    return _server_error(fault.status or 502)


def _server_error(status: int) -> Reply:
    code = _5XX_CODES.get(status, "InternalServerError")
    return error_reply(status, code, f"Injected {status}.")
