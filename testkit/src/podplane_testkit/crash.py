"""Named crash points for reliability tests.

PODPLANE_CRASH_AT="<step>:<phase>" makes the process SIGKILL itself right after that phase is
persisted; "<step>:after_call" fires right after the cloud call, before "submitted" is saved.
Several points may be given, separated by commas. The engine calls `at_point` through its
PointHook (podplane.ops.context), which the product leaves empty.

PODPLANE_CRASH_SWEEP=<file> kills the process at the first point it reaches that the file
does not list yet, after appending it: restarting the server again and again walks an
operation through every point it records, one kill each, with no list kept by hand
(tests/crash/sweep.py).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

ENV = "PODPLANE_CRASH_AT"
SWEEP_ENV = "PODPLANE_CRASH_SWEEP"


def at_point(step: str, point: str) -> None:
    here = f"{step}:{point}"
    wanted = {p.strip() for p in os.environ.get(ENV, "").split(",") if p.strip()}
    if here in wanted or _new_in_sweep(here):
        os.kill(os.getpid(), signal.SIGKILL)


def _new_in_sweep(here: str) -> bool:
    sweep = os.environ.get(SWEEP_ENV)
    if not sweep:
        return False
    path = Path(sweep)
    seen = set(path.read_text().splitlines()) if path.exists() else set()
    if here in seen:
        return False
    with path.open("a") as f:  # on disk before the kill: the next run passes this point
        f.write(here + "\n")
        f.flush()
        os.fsync(f.fileno())
    return True


def swept(path: Path) -> list[str]:
    """The points a sweep file lists, in the order they were killed at."""
    return path.read_text().splitlines() if path.exists() else []
