"""Whether a feature change is a destroy depends on its plan, like a group's scale-down: a plan
that switches HyperPod's AutoScaling off or deletes a Karpenter NodePool terminates nodes
(admin + confirm); enabling, growing the group list or changing nothing does not. A plan that
deletes what holds data (a file system, a workspace, a tracking server, a volume or claim) is a
destroy too (ADR 0016). Pure: the plans are rendered from the feature's real resources
against what a cluster would show."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, get_args

from podplane.domain.features import catalog as cat
from podplane.domain.features import fsx
from podplane.domain.features import mlflow as mlf
from podplane.domain.features.model import HOLDS_DATA, Kind, Resource, Seen, holds_data, plan
from podplane.domain.features.render import (
    ClusterFacts,
    autoscaling,
    fsx_lustre,
    hyperpod_observability,
    mlflow,
    tiered,
)
from podplane.services.features.service import terminates_nodes

FACTS = ClusterFacts("gpu", "gpu-hp", "gpu", "111122223333", "us-west-2", "podplane-gpu",
                     "arn:aws:sagemaker:us-west-2:111122223333:cluster/abc")
POOL = "kube karpenter.sh/v1 NodePool podplane-{}"
VOLUMES = [f"kube v1 PersistentVolume {fsx.PV_NAME}",
           f"kube v1 PersistentVolumeClaim {fsx.JOBS_NAMESPACE}/{fsx.CLAIM}"]


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


# -- deleting what holds data (ADR 0016) --------------------------------------------------------
def _turned_off(render: Callable[[bool], list[Resource]]) -> list[str]:
    """What switching a running feature off deletes that holds data."""
    return plan(render(False), _as_running(render(True))).deletes_data()


def _settings(name: str, **given: Any) -> dict[str, Any]:
    return cat.check_settings(cat.feature(name), given)


def test_fsx_off_deletes_the_file_system_and_its_volume_and_claim() -> None:
    settings = _settings(cat.FSX_LUSTRE)
    lost = _turned_off(lambda on: fsx_lustre(on, settings, FACTS, None))
    assert sorted(lost) == sorted(["fsx file system podplane-gpu", *VOLUMES])


def test_an_existing_file_system_off_deletes_only_its_volume_and_claim() -> None:
    settings = _settings(cat.FSX_LUSTRE, file_system_id="fs-0123456789abcdef0")
    running = _as_running(fsx_lustre(True, settings, FACTS, None))
    running["fsx file system fs-0123456789abcdef0"] = Seen(
        {"FileSystemId": "fs-0123456789abcdef0", "FileSystemType": "LUSTRE"}, False)
    lost = plan(fsx_lustre(False, settings, FACTS, None), running).deletes_data()
    assert sorted(lost) == sorted(VOLUMES)


def test_observability_workspace_and_mlflow_server_off_delete_data() -> None:
    hpo_settings = _settings(cat.HYPERPOD_OBSERVABILITY)
    assert _turned_off(lambda on: hyperpod_observability(on, hpo_settings, FACTS, None)) == [
        "amp workspace podplane-gpu"]
    ml = _settings(cat.MLFLOW)
    assert _turned_off(lambda on: mlflow(on, ml, FACTS)) == [
        "mlflow tracking server " + mlf.server_name("gpu")]


def test_node_and_role_only_features_delete_no_data() -> None:
    assert _turned_off(lambda on: tiered(on, {"memory_percent": 20}, FACTS)) == []
    assert _turned_off(lambda on: autoscaling(on, {"groups": ["gpu-a"]}, FACTS)) == []


def test_every_kind_is_classified_and_an_unknown_one_holds_data() -> None:
    assert set(get_args(Kind)) == set(HOLDS_DATA), "classify the new kind in HOLDS_DATA"
    made_up = Resource("new", "s3-objects", "s3 objects x", {}, False)  # type: ignore[arg-type]
    assert holds_data(made_up)
    assert plan([made_up], {made_up.key: Seen({}, True)}).deletes_data() == ["s3 objects x"]
