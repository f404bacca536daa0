"""Faults the Slack stand-in can inject: what a test asks for, validated up front.

See emulator/slack_standin.py's docstring for what each kind does to a call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal

FaultKind = Literal["error", "rate_limit", "server_error", "slow", "drop_after_receipt"]

# Optional Fault fields each kind takes. A field set on the wrong kind is nearly always a typo
# in a test, and silently ignoring it would make the test pass for the wrong reason.
_KIND_FIELDS: dict[str, frozenset[str]] = {
    "error": frozenset({"code"}),
    "rate_limit": frozenset({"retry_after"}),
    "server_error": frozenset({"status", "body"}),
    "slow": frozenset({"delay"}),
    "drop_after_receipt": frozenset(),
}
_OPTIONAL_FIELDS = frozenset().union(*_KIND_FIELDS.values())
# Kinds that can answer after the call took effect (Fault.after_post).
AFTER_POST_KINDS = frozenset({"error", "server_error"})


@dataclass(frozen=True)
class Fault:
    kind: FaultKind
    channel: str | None = None
    method: str | None = "chat.postMessage"
    times: int | None = None
    code: str | None = None
    retry_after: int | None = None
    status: int | None = None
    body: str | None = None
    delay: float | None = None
    after_post: bool = False

    def __post_init__(self) -> None:
        if self.kind not in _KIND_FIELDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; one of {sorted(_KIND_FIELDS)}")
        stray = {n for n in _OPTIONAL_FIELDS if getattr(self, n) is not None}
        stray -= _KIND_FIELDS[self.kind]
        if stray:
            raise ValueError(f"a {self.kind} fault takes no {', '.join(sorted(stray))}")
        if self.times is not None and (not isinstance(self.times, int) or self.times < 1):
            raise ValueError("times must be a whole number of at least 1 (None: unlimited)")
        if self.kind == "error" and not self.code:
            raise ValueError("an error fault needs a code, e.g. 'channel_not_found'")
        if self.kind == "slow" and (self.delay is None or self.delay <= 0):
            raise ValueError("a slow fault needs a positive delay in seconds")
        if self.status is not None and not 500 <= self.status <= 599:
            raise ValueError(f"server_error status must be 5xx, got {self.status}")
        if self.retry_after is not None and self.retry_after < 0:
            raise ValueError("retry_after must not be negative")
        if not isinstance(self.after_post, bool):
            raise ValueError(f"after_post must be true or false, got {self.after_post!r}")
        if self.after_post and self.kind not in AFTER_POST_KINDS:
            raise ValueError(
                f"after_post applies to {' and '.join(sorted(AFTER_POST_KINDS))} faults,"
                f" not {self.kind} (slow and drop_after_receipt always take effect first)"
            )

    @classmethod
    def from_json(cls, spec: Mapping[str, Any]) -> Fault:
        unknown = set(spec) - {f.name for f in fields(cls)}
        if unknown:
            raise ValueError(f"unknown fault fields: {', '.join(sorted(unknown))}")
        return cls(**spec)
