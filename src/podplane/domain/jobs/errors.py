"""Job refusals with their own stable codes."""

from __future__ import annotations

from podplane.domain.errors import Conflict


class InsufficientGpus(Conflict):
    code = "insufficient_gpus"


class JobExists(Conflict):
    code = "job_exists"
