"""Whether a feature change is a destroy depends on its plan, like a group's scale-down: a plan
that switches HyperPod's AutoScaling off or deletes a Karpenter NodePool terminates nodes
(admin + confirm); enabling, growing the group list or changing nothing does not. Pure: the
plans are rendered from the feature's real resources against what a cluster would show."""

from __future__ import annotations

from podplane.domain.features.model import Resource, Seen, plan
from podplane.domain.features.render import ClusterFacts, autoscaling, tiered
from podplane.services.features.service import terminates_nodes

FACTS = ClusterFacts("gpu", "gpu-hp", "gpu", "111122223333", "us-west-2", "podplane-gpu",
                     "arn:aws:sagemaker:us-west-2:111122223333:cluster/abc")
POOL = "kube karpenter.sh/v1 NodePool podplane-{}"


def _as_running(resources: list[Resource]) -> dict[str, Seen]:
    """What a cluster shows when these resources are exactly in place (made by podplane)."""
    return {r.key: Seen(dict(r.desired), True) for r in resources if r.present}


def _autoscaling_on(*groups: str) -> dict[str, Seen]:
    return _as_running(autoscaling(True, {"groups": list(groups)}, FACTS))


def _leftover_pools(*groups: str) -> list[Resource]:
    """The NodePools a narrower setting no longer renders (state.rendered sweeps them)."""
    on = autoscaling(True, {"groups": list(groups)}, FACTS)
    return [Resource(r.feature, r.kind, r.key, r.desired, False) for r in on
            if r.kind == "kube" and r.desired["kind"] == "NodePool"]


def test_switching_autoscaling_off_terminates_nodes() -> None:
    running = _autoscaling_on("gpu-a")
    off = autoscaling(False, {}, FACTS) + _leftover_pools("gpu-a")
    doomed = terminates_nodes(plan(off, running))
    assert doomed == [POOL.format("gpu-a"), "hyperpod AutoScaling"]


def test_dropping_a_group_deletes_its_pool_and_terminates_nodes() -> None:
    running = _autoscaling_on("gpu-a", "gpu-b")
    narrower = autoscaling(True, {"groups": ["gpu-a"]}, FACTS)
    keys = {r.key for r in narrower}
    dropped = [r for r in _leftover_pools("gpu-a", "gpu-b") if r.key not in keys]
    assert terminates_nodes(plan(narrower + dropped, running)) == [POOL.format("gpu-b")]


def test_enabling_widening_and_other_features_terminate_nothing() -> None:
    enable = plan(autoscaling(True, {"groups": ["gpu-a"]}, FACTS), {})
    assert [s.verb for s, _ in enable.steps][:1] == ["create"]
    assert terminates_nodes(enable) == []
    wider = autoscaling(True, {"groups": ["gpu-a", "gpu-b"]}, FACTS)
    assert terminates_nodes(plan(wider, _autoscaling_on("gpu-a"))) == []
    assert terminates_nodes(plan(wider, _autoscaling_on("gpu-a", "gpu-b"))) == []
    # tiered checkpointing off deletes a role and a ServiceAccount, never a node
    on = tiered(True, {"memory_percent": 20}, FACTS)
    checkpoint_off = plan(tiered(False, {}, FACTS), _as_running(on))
    assert not checkpoint_off.empty and terminates_nodes(checkpoint_off) == []
