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
    return sum(cpu for _, cpu in _group(pgid))


def compiler_seconds(pgid: int) -> float:
    """User + system CPU of the live JIT compiler threads of the group's processes: what the
    emulator's JVM spends compiling itself, not serving (HotSpot names them "C1
    CompilerThread0", "C2 CompilerThread1", ...; /proc keeps 15 characters of a thread's
    name). A lower bound: HotSpot ends compiler threads it no longer needs, and an ended
    thread's CPU is no longer listed on its own."""
    total = 0.0
    for stat, _ in _group(pgid):
        for task in stat.parent.glob("task/[0-9]*"):
            try:
                name = (task / "comm").read_text()
            except OSError:
                continue
            if "CompilerThre" in name:
                total += _stat(task / "stat")[1]
    return total


def _group(pgid: int) -> list[tuple[Path, float]]:
    """The /proc stat file and CPU seconds of every live process in the group."""
    found = []
    for path in Path("/proc").glob("[0-9]*/stat"):
        group, seconds = _stat(path)
        if group == pgid:
            found.append((path, seconds))
    return found


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
