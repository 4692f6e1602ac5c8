"""podplane's scale-in plan for a warm pool (domain/inference/pool.py): only free pods, and
only when Kubernetes' own victim order will remove exactly them."""

from __future__ import annotations

from typing import Any

import pytest

from podplane.domain.inference import pool as dp
from podplane.domain.inference.errors import PoolPodsAssigned, PoolScaleUnsafe


def pod(name: str, *, assigned: str | None = None, ready: bool = True,
        draining: str | None = None) -> dict[str, Any]:
    labels = {dp.POOL_LABEL: "warm", **({dp.ASSIGNED_LABEL: assigned} if assigned else {})}
    notes = {dp.DRAINING: draining} if draining else {}
    return {"metadata": {"name": name, "uid": f"u-{name}", "labels": labels,
                         "annotations": notes},
            "spec": {"nodeName": f"node-{name}"},
            "status": {"phase": "Running", "conditions": [
                {"type": "Ready", "status": "True" if ready else "False"}]}}


def test_scale_in_chooses_free_pods_and_not_ready_ones_first() -> None:
    pods = [pod("a", assigned="chat"), pod("b"), pod("c", ready=False)]
    assert [v["metadata"]["name"] for v in dp.scale_in_plan(pods, "warm", 1)] == ["c"]
    assert [v["metadata"]["name"] for v in dp.scale_in_plan(pods, "warm", 2)] == ["c", "b"]


def test_an_assigned_or_draining_pod_is_never_a_victim() -> None:
    pods = [pod("a", assigned="chat"), pod("b", draining="chat"), pod("c")]
    with pytest.raises(PoolPodsAssigned) as refused:
        dp.scale_in_plan(pods, "warm", 2)
    assert "a (chat)" in str(refused.value) and "b (draining)" in str(refused.value)


def test_an_assigned_pod_that_is_not_ready_makes_the_plan_unsafe() -> None:
    """Kubernetes removes a not Ready pod before a Ready one whatever their costs."""
    pods = [pod("a", assigned="chat", ready=False), pod("b")]
    with pytest.raises(PoolScaleUnsafe) as refused:
        dp.scale_in_plan(pods, "warm", 1)
    assert "a" in str(refused.value)


def test_running_requests_reads_the_engines_gauge() -> None:
    text = ('# TYPE vllm:num_requests_running gauge\n'
            'vllm:num_requests_running{model_name="warm"} 3.0\n'
            'vllm:num_requests_running_total 9\n')
    assert dp.running_requests(text, "vllm") == 3.0
    assert dp.running_requests('sglang:num_running_reqs{model_name="w"} 0.0\n', "sglang") == 0
    assert dp.running_requests("", "vllm") is None
