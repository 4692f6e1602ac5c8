"""The endpoint's KEDA ScaledObject, checked against the upstream CRD in ../shared/crds/keda
(v1alpha1 schema, as the API server would): valid for both engines and both gauges, refused by
the same schema when the trigger or the target goes; min above max is a 422 naming the field;
the Deployment starts inside the bounds."""

from __future__ import annotations

import copy
import functools
from typing import Any

import jsonschema
import pytest
import yaml

from podplane.domain.errors import InvalidInput
from podplane.domain.inference import autoscaling as asc
from tests.clusters.test_kubeflow_manifests import SHARED_CRDS

CRD = SHARED_CRDS / "keda" / "keda.sh_scaledobjects.yaml"


@functools.cache
def schema() -> dict[str, Any]:
    crd = yaml.load(CRD.read_text(), Loader=yaml.CSafeLoader)
    (v1,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
    assert crd["spec"]["names"]["kind"] == asc.KIND
    assert f"{crd['spec']['group']}/v1alpha1" == asc.API_VERSION
    return dict(v1["schema"]["openAPIV3Schema"])


def request(engine: str = "vllm", **spec: Any) -> dict[str, Any]:
    return {"name": "qwen", "engine": engine, "model": "Qwen/Qwen2.5-0.5B-Instruct",
            "instance_group": "gpu", "replicas": 1, "exposure": "service",
            "autoscaling": {"min_replicas": 1, "max_replicas": 4, "metric": "running",
                            "target": 8.0, "cooldown_seconds": 300, **spec}}


@pytest.mark.parametrize(("engine", "metric", "gauge"), [
    ("vllm", "running", "vllm:num_requests_running"),
    ("vllm", "waiting", "vllm:num_requests_waiting"),
    ("sglang", "running", "sglang:num_running_reqs"),
    ("sglang", "waiting", "sglang:num_queue_reqs")])
def test_scaled_object_is_valid_under_kedas_crd(engine: str, metric: str, gauge: str) -> None:
    so = asc.scaled_object(request(engine, metric=metric, target=2.5, cooldown_seconds=120))
    jsonschema.validate(so, schema())
    assert so["metadata"]["labels"]["podplane.io/endpoint"] == "qwen"
    assert so["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                            "name": "qwen"}
    (trigger,) = so["spec"]["triggers"]
    # only the endpoint's own samples (its served model name), whatever KEDA lists
    assert trigger["metadata"]["valueLocation"] == f'{gauge}{{model_name="qwen"}}'
    assert trigger["metadata"]["targetValue"] == "2.5"
    port = 30000 if engine == "sglang" else 8000
    assert trigger["metadata"]["url"] == \
        f"http://qwen.default.svc.cluster.local:{port}/metrics"
    behavior = so["spec"]["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]
    assert behavior["scaleDown"]["stabilizationWindowSeconds"] == 120


def test_the_crd_refuses_what_keda_needs_missing() -> None:
    so = asc.scaled_object(request())
    for path in (("triggers",), ("scaleTargetRef",)):
        broken = copy.deepcopy(so)
        del broken["spec"][path[0]]
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema())
    broken = copy.deepcopy(so)
    broken["spec"]["triggers"][0]["metadata"]["targetValue"] = 3  # metadata is string -> string
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema())


def test_bounds() -> None:
    with pytest.raises(InvalidInput) as refused:
        asc.check({"min_replicas": 3, "max_replicas": 2})
    assert refused.value.extra["field"] == "autoscaling.max_replicas"
    spec = request()["autoscaling"]
    assert [asc.clamp(n, spec) for n in (1, 3, 9)] == [1, 3, 4]
    assert asc.clamp(5, None) == 5
    kinds = [m["kind"] for m in asc.manifests(request())]
    assert kinds == ["Deployment", "Service", "ScaledObject"]
    assert [m["kind"] for m in asc.manifests({**request(), "autoscaling": None})] == \
        ["Deployment", "Service"]


def test_the_same_request_again_is_already_applied_and_a_new_bound_is_not() -> None:
    wanted = asc.scaled_object(request())
    live = copy.deepcopy(wanted)
    live["spec"]["fallback"] = None              # what a server or KEDA may add
    live["spec"]["triggers"][0]["metadata"]["extra"] = "x"
    assert asc.already(live, wanted)
    assert not asc.already(None, wanted)
    moved = asc.scaled_object(request(max_replicas=5))
    assert not asc.already(live, moved)
