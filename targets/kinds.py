"""The kinds of send, in the order a pass takes them (rotations, few and due at a fixed local
time, first), and a pass over them: what every target hands the pipeline."""

from __future__ import annotations

from typing import Any

from core.runtime import Runtime
from messages.kind import MESSAGE_KIND
from processor import one_pass
from processor.abc import Kind
from rotations.kind import ROTATION_DAY_KIND

KINDS: tuple[Kind[Any], ...] = (ROTATION_DAY_KIND, MESSAGE_KIND)


def run_pass(rt: Runtime, *, dry_run: bool = False) -> dict[str, Any]:
    return one_pass.run_pass(rt, KINDS, dry_run=dry_run)
