"""The verify step's judgement of the health agents (the chart's two DaemonSets)."""

from __future__ import annotations

from typing import Any

from podplane.services.clusters.verify import problems


def seen(ready: int, desired: int, missing: list[str] | None = None) -> dict[str, Any]:
    return {"nodes_ready": 2, "health_agent_ready": ready, "health_agent_desired": desired,
            "health_agent_missing": missing or [], "addons": {"vpc-cni": "ACTIVE"}}


def test_cpu_only_cluster_wants_no_agent() -> None:
    assert problems(seen(0, 0), 2) == []


def test_agents_must_be_ready_where_scheduled() -> None:
    assert problems(seen(1, 2), 2) == ["health agent ready on 1/2 nodes"]
    assert problems(seen(2, 2), 2) == []


def test_a_missing_agent_daemonset_is_named() -> None:
    assert problems(seen(0, 0, ["health-monitoring-agent-non-nvidia"]), 2) == [
        "health agent DaemonSet missing: health-monitoring-agent-non-nvidia"]
