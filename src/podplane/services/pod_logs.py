"""A workload's logs for agents and scripts (a job's pods, an endpoint's pods): every pod or
one, bounded and paged. Each page holds at most `limit` lines; `cursor` is the index of the
next line in the workload's combined log (pods in name order), so paging never re-reads more
than MAX_LINES_PER_POD lines of a pod."""

from __future__ import annotations

from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import CloudError, InvalidInput, NotFound
from podplane.domain.jobs.kinds import NAMESPACE

PAGE = 200
MAX_PAGE = 1000
MAX_LINES_PER_POD = 5000
MAX_SINCE_SECONDS = 30 * 86400
Shape = dict[str, Any]


def check_bounds(since_seconds: int | None, tail: int | None) -> None:
    """The same bounds on every face (REST and MCP schemas, the log WebSocket, the CLI)."""
    if tail is not None and not 1 <= tail <= MAX_LINES_PER_POD:
        raise InvalidInput(f"tail must be 1..{MAX_LINES_PER_POD}.", field="tail")
    if since_seconds is not None and not 1 <= since_seconds <= MAX_SINCE_SECONDS:
        raise InvalidInput(f"since_seconds must be 1..{MAX_SINCE_SECONDS}.",
                           field="since_seconds")


async def pod_lines(kube: KubePort, pod: str, container: str | None,
                    since_seconds: int | None, tail: int | None) -> tuple[list[str], str | None]:
    """A pod's lines (the last MAX_LINES_PER_POD at most), or why there are none yet."""
    bound = min(tail, MAX_LINES_PER_POD) if tail is not None else MAX_LINES_PER_POD
    lines: list[str] = []
    try:
        async for line in kube.logs(pod, NAMESPACE, container=container, tail_lines=bound,
                                    since_seconds=since_seconds):
            lines.append(line)
    except (CloudError, InvalidInput) as err:  # waiting to start, or no such container
        return [], err.message
    except NotFound:
        return [], "the pod is gone"
    return lines, None


async def page(kube: KubePort, owner: str, pods: list[str], pod: str | None,
               container: str | None, since_seconds: int | None, tail: int | None,
               cursor: int, limit: int) -> Shape:
    if pod is not None and pod not in pods:
        raise NotFound(f"{owner} has no pod {pod!r}.",
                       hint=f"Its pods: {', '.join(pods) or 'none yet'}.")
    limit = max(1, min(limit, MAX_PAGE))
    chosen = [pod] if pod else pods
    out: list[Shape] = []
    notes: dict[str, str] = {}
    index = 0
    for name in chosen:
        lines, why = await pod_lines(kube, name, container, since_seconds, tail)
        if why:
            notes[name] = why
        for line in lines:
            if cursor <= index < cursor + limit:
                out.append({"pod": name, "line": line})
            index += 1
    more = index > cursor + limit
    return {"pods": chosen, "lines": out,
            "next_cursor": cursor + limit if more else None, "total": index,
            "notes": notes}
