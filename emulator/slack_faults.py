"""Faults the Slack stand-in can inject: what a test asks for, validated up front.

See emulator/slack_standin.py's docstring for what each kind does to a call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Literal

from emulator.fault_fields import FaultFields

FaultKind = Literal["error", "rate_limit", "server_error", "slow", "drop_after_receipt"]

# Optional Fault fields each kind takes (emulator/fault_fields.py checks them).
_KIND_FIELDS: dict[str, frozenset[str]] = {
    "error": frozenset({"code"}),
    "rate_limit": frozenset({"retry_after"}),
    "server_error": frozenset({"status", "body"}),
    "slow": frozenset({"delay"}),
    "drop_after_receipt": frozenset(),
}
# Kinds that can answer after the call took effect (Fault.after_post).
AFTER_POST_KINDS = frozenset({"error", "server_error"})


@dataclass(frozen=True)
class Fault(FaultFields):
    KIND_FIELDS: ClassVar[Mapping[str, frozenset[str]]] = _KIND_FIELDS

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
        self.check_fields()
        if self.kind == "error" and not self.code:
            raise ValueError("an error fault needs a code, e.g. 'channel_not_found'")
        if self.kind == "slow" and (self.delay is None or self.delay <= 0):
            raise ValueError("a slow fault needs a positive delay in seconds")
        if self.status is not None and not 500 <= self.status <= 599:
            raise ValueError(f"server_error status must be 5xx, got {self.status}")
        self.check_flag(
            "after_post",
            AFTER_POST_KINDS,
            " (slow and drop_after_receipt always take effect first)",
        )
