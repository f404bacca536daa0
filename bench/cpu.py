"""CPU time, for telling a CPU-bound run apart from a contended one: on a small machine the
emulator, the stand-in and the workers share the same cores."""

from __future__ import annotations

import os
import resource
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")


def own_seconds() -> float:
    """User + system CPU of this process, all its threads."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def group_seconds(pgid: int) -> float:
    """User + system CPU of every live process in the group (the emulator is gcloud's shell
    script and the java it starts), from /proc; 0.0 where /proc is not there."""
    return sum(cpu for group, cpu in map(_stat, Path("/proc").glob("[0-9]*/stat")) if group == pgid)


def process_seconds(pid: int) -> float:
    """User + system CPU of one live process (0.0 once it is gone)."""
    return _stat(Path(f"/proc/{pid}/stat"))[1]


def _stat(path: Path) -> tuple[int, float]:
    """(process group, CPU seconds) from a /proc/<pid>/stat file; (-1, 0.0) if it is gone."""
    try:
        # The command name may hold spaces; the fields after its ")" are fixed.
        fields = path.read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return -1, 0.0
    return int(fields[2]), (int(fields[11]) + int(fields[12])) / _TICKS
