"""The checks every stand-in's Fault shares, so a test's typo fails loudly in either: a known
kind, only the optional fields that kind takes, a positive whole `times`, a non-negative
`retry_after`, a true-or-false flag, and no unknown field in a JSON spec."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any, ClassVar, Self


class FaultFields:
    """Mixed into a stand-in's frozen Fault dataclass, which calls check_fields() from its
    __post_init__ and then checks what is its own. KIND_FIELDS maps each kind to the optional
    fields it takes: a field set on the wrong kind is nearly always a typo in a test, and
    silently ignoring it would make the test pass for the wrong reason."""

    KIND_FIELDS: ClassVar[Mapping[str, frozenset[str]]]
    kind: str
    times: int | None
    retry_after: int | None

    def check_fields(self) -> None:
        kinds = self.KIND_FIELDS
        if self.kind not in kinds:
            raise ValueError(f"unknown fault kind {self.kind!r}; one of {sorted(kinds)}")
        optional = frozenset[str]().union(*kinds.values())
        stray = {n for n in optional if getattr(self, n) is not None} - kinds[self.kind]
        if stray:
            raise ValueError(f"a {self.kind} fault takes no {', '.join(sorted(stray))}")
        times = self.times
        if times is not None and (
            isinstance(times, bool) or not isinstance(times, int) or times < 1
        ):
            raise ValueError("times must be a whole number of at least 1 (None: unlimited)")
        if self.retry_after is not None and self.retry_after < 0:
            raise ValueError("retry_after must not be negative")

    def check_flag(self, name: str, applies_to: frozenset[str], why: str = "") -> None:
        """The boolean field `name` is a bool, and set only on kinds in `applies_to`."""
        value = getattr(self, name)
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be true or false, got {value!r}")
        if value and self.kind not in applies_to:
            kinds = sorted(applies_to)
            listed = " and ".join([", ".join(kinds[:-1]), kinds[-1]] if kinds[:-1] else kinds)
            raise ValueError(f"{name} applies to {listed} faults, not {self.kind}{why}")

    @classmethod
    def from_json(cls, spec: Mapping[str, Any]) -> Self:
        unknown = set(spec) - {f.name for f in fields(cls)}  # type: ignore[arg-type]
        if unknown:
            raise ValueError(f"unknown fault fields: {', '.join(sorted(unknown))}")
        return cls(**spec)
