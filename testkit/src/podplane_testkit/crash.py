"""Named crash points for reliability tests.

PODPLANE_CRASH_AT="<step>:<phase>" makes the process SIGKILL itself right after that phase is
persisted; "<step>:after_call" fires right after the cloud call, before "submitted" is saved.
Several points may be given, separated by commas. The engine calls `at_point` through its
PointHook (podplane.ops.context), which the product leaves empty.
"""

from __future__ import annotations

import os
import signal

ENV = "PODPLANE_CRASH_AT"


def at_point(step: str, point: str) -> None:
    wanted = {p.strip() for p in os.environ.get(ENV, "").split(",") if p.strip()}
    if f"{step}:{point}" in wanted:
        os.kill(os.getpid(), signal.SIGKILL)
