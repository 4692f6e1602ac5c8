"""Hang detection from the logs: a job whose running pods have all written nothing for
`PODPLANE_JOB_STALL_SECONDS` (default STALL_SECONDS) is stalled (a hung collective keeps its
workers alive and silent).

The cluster's clock decides, not ours: `sinceSeconds` is counted by the kubelet that serves
the log, and the newest line's time is the kubelet's own timestamp (`timestamps=true`, an
RFC 3339 prefix per line). Both are Kubernetes PodLogOptions (API reference, core/v1,
"Read log of the specified Pod").
"""

from __future__ import annotations

from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import PodplaneError
from podplane.domain.jobs.kinds import NAMESPACE

Shape = dict[str, Any]
# PyTorch's NCCL watchdog waits 10 minutes by default before it aborts a stuck collective
# (torch.distributed init_process_group `timeout`): silence that long is not a slow step.
STALL_SECONDS = 600


async def _lines(kube: KubePort, pod: str, **options: Any) -> list[str]:
    return [line async for line in kube.logs(pod, NAMESPACE, tail_lines=1, **options)]


async def stall_of(kube: KubePort, pods: list[Shape],
                   seconds: int = STALL_SECONDS) -> Shape | None:
    """{since_seconds, last_line_at, pod} when every running pod is silent; else None (also
    when a pod wrote nothing yet, or its log cannot be read: no verdict is not a stall)."""
    running = [p["metadata"]["name"] for p in pods
               if (p.get("status") or {}).get("phase") == "Running"]
    if not running:
        return None
    newest: tuple[str, str] | None = None
    try:
        for pod in running:
            if await _lines(kube, pod, since_seconds=seconds):
                return None
            last = await _lines(kube, pod, timestamps=True)
            if not last:
                return None
            stamp = last[-1].split(" ", 1)[0]
            newest = max(newest or (stamp, pod), (stamp, pod))
    except PodplaneError:
        return None
    if newest is None:
        return None
    return {"since_seconds": seconds, "last_line_at": newest[0], "pod": newest[1]}
