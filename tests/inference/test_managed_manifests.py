"""The managed endpoint's InferenceEndpointConfig, checked against the upstream CRD in
../shared/crds/hyperpod-inference (v1 schema, as the API server would): valid when rendered,
refused by the same schema when a required field goes; tensor parallelism against the instance
type's GPUs; a model outside the bucket prefix the operator's role can read is refused."""

from __future__ import annotations

import copy
import functools
from typing import Any

import jsonschema
import pytest
import yaml

from podplane.domain.catalog import lookup
from podplane.domain.errors import Conflict, InvalidInput
from podplane.domain.inference import managed
from podplane.domain.inference import managed_options as options
from podplane.domain.inference import managed_sources as sources
from podplane.domain.inference.render import render
from tests.clusters.test_kubeflow_manifests import SHARED_CRDS

CRD = SHARED_CRDS / "hyperpod-inference" / \
    "inference.sagemaker.aws.amazon.com_inferenceendpointconfigs.yaml"
BUCKET = "podplane-gpu-bucket"


@functools.cache
def schema() -> dict[str, Any]:
    crd = yaml.load(CRD.read_text(), Loader=yaml.CSafeLoader)
    (v1,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    assert crd["spec"]["names"]["kind"] == managed.KIND
    assert f"{crd['spec']['group']}/v1" == managed.API_VERSION
    return dict(v1["schema"]["openAPIV3Schema"])


def _render(**kw: Any) -> dict[str, Any]:
    g5 = lookup("ml.g5.12xlarge")
    assert g5 is not None and g5.gpu_count == 4
    return managed.render("llama", f"s3://{BUCKET}/models/llama-3-8b/", BUCKET, "us-west-2",
                          g5, **kw)


@pytest.mark.parametrize("lb", [False, True])
def test_rendered_config_is_valid_under_the_operators_crd(lb: bool) -> None:
    obj = _render(tensor_parallel=4, replicas=2, load_balancer=lb)
    jsonschema.validate(obj, schema())
    spec = obj["spec"]
    assert spec["modelSourceConfig"]["modelLocation"] == "models/llama-3-8b"
    assert spec["worker"]["resources"]["limits"] == {"nvidia.com/gpu": 4}
    assert ("loadBalancer" in spec) is lb


@pytest.mark.parametrize("field", ["modelName", "modelSourceConfig", "worker"])
def test_the_crd_refuses_it_without_a_required_field(field: str) -> None:
    obj = copy.deepcopy(_render())
    del obj["spec"][field]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(obj, schema())


def test_tensor_parallel_beyond_the_instance_types_gpus_is_refused() -> None:
    with pytest.raises(InvalidInput) as err:
        _render(tensor_parallel=8)
    assert err.value.extra["field"] == "tensor_parallel" and "4 GPU(s)" in str(err.value)


@pytest.mark.parametrize("model", [f"s3://{BUCKET}/checkpoints/x", "s3://other-bucket/models/x",
                                   f"s3://{BUCKET}/models/", "meta-llama/Llama-3.1-8B"])
def test_a_model_the_operators_role_cannot_read_is_refused(model: str) -> None:
    g5 = lookup("ml.g5.12xlarge")
    assert g5 is not None
    with pytest.raises(InvalidInput) as err:
        managed.render("llama", model, BUCKET, "us-west-2", g5)
    assert err.value.extra["field"] == "model"


def test_without_the_operator_it_is_a_conflict() -> None:
    with pytest.raises(Conflict):
        managed.require_operator(False, "gpu")
    managed.require_operator(True, "gpu")


JUMPSTART_CRD = SHARED_CRDS / "hyperpod-inference" / \
    "inference.sagemaker.aws.amazon.com_jumpstartmodels.yaml"
PV = {"spec": {"csi": {"driver": "fsx.csi.aws.com", "volumeHandle": "fs-0123456789abcdef0",
                       "volumeAttributes": {"dnsname": "fs-0123.fsx.us-west-2.amazonaws.com",
                                            "mountname": "abcdefgh"}}}}


def test_an_fsx_model_is_valid_under_the_crd_and_needs_the_feature() -> None:
    g5 = lookup("ml.g5.12xlarge")
    assert g5 is not None
    source = sources.fsx_source("fsx:models/llama", PV, True)
    obj = managed.render("llama", "fsx:models/llama", BUCKET, "us-west-2", g5, fsx=source)
    jsonschema.validate(obj, schema())
    assert obj["spec"]["modelSourceConfig"] == {
        "modelSourceType": "fsx", "modelLocation": "models/llama", "fsxStorage": {
            "fileSystemId": "fs-0123456789abcdef0", "mountName": "abcdefgh",
            "dnsName": "fs-0123.fsx.us-west-2.amazonaws.com"}}
    with pytest.raises(Conflict):
        sources.fsx_source("fsx:models/llama", None, False)
    with pytest.raises(InvalidInput):
        sources.fsx_source("fsx:../etc", PV, True)


def test_a_jumpstart_model_is_valid_under_its_crd() -> None:
    crd = yaml.load(JUMPSTART_CRD.read_text(), Loader=yaml.CSafeLoader)
    (v1,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    g5 = lookup("ml.g5.12xlarge")
    assert g5 is not None
    obj = sources.render_jumpstart("ds", "jumpstart:deepseek-llm-r1-distill-qwen-1-5b@2.0.4",
                                   g5, replicas=2, load_balancer=True,
                                   labels=managed.labels("ds"))
    jsonschema.validate(obj, v1["schema"]["openAPIV3Schema"])
    assert obj["spec"]["model"]["modelVersion"] == "2.0.4"
    assert obj["spec"]["model"]["acceptEula"] is False   # the CRD's default, said explicitly
    assert obj["kind"] == crd["spec"]["names"]["kind"]
    gated = sources.render_jumpstart("ll", "jumpstart:meta-textgeneration-llama-3-1-8b-instruct",
                                     g5, labels=managed.labels("ll"), accept_eula=True)
    jsonschema.validate(gated, v1["schema"]["openAPIV3Schema"])
    assert gated["spec"]["model"]["acceptEula"] is True
    sources.refuse_eula_elsewhere("jumpstart:x", True)
    with pytest.raises(InvalidInput) as err:
        sources.refuse_eula_elsewhere(f"s3://{BUCKET}/models/x", True)
    assert err.value.extra["field"] == "accept_eula"
    for bad in ("jumpstart:-x", "jumpstart:ok@2.0"):
        with pytest.raises(InvalidInput):
            sources.jumpstart_model(bad)


@pytest.mark.parametrize("model", ["fsx:models/x", "jumpstart:deepseek-llm-r1-distill-qwen-1-5b"])
def test_self_managed_endpoints_refuse_operator_only_sources(model: str) -> None:
    with pytest.raises(InvalidInput) as err:
        render({"name": "x", "engine": "vllm", "model": model, "instance_group": "g",
                "tensor_parallel": 1, "replicas": 1, "exposure": "service"})
    assert err.value.extra["field"] == "model"


AMP = "https://aps-workspaces.us-west-2.amazonaws.com/workspaces/ws-1a2b3c4d-5e6f"
AUTO = {"min_replicas": 1, "max_replicas": 4, "metric": "waiting", "target": 2.0,
        "cooldown_seconds": 120}


@pytest.mark.parametrize(("kv", "url", "routing"), [
    ("l1", None, "prefixaware"), ("tieredstorage", None, "kvaware"),
    ("redis", "redis://cache.internal:6379", "session"), (None, None, "roundrobin")])
def test_kv_cache_routing_and_autoscaling_are_valid_under_both_crds(
        kv: str | None, url: str | None, routing: str) -> None:
    body = {"name": "llama", "kind": "managed", "kv_cache": kv, "kv_cache_url": url,
            "routing": routing, "autoscaling": AUTO}
    options.check(body)
    extra = options.options(body, AMP)
    config = _render()
    config["spec"].update(extra)
    jsonschema.validate(config, schema())
    g5 = lookup("ml.g5.12xlarge")
    assert g5 is not None
    js = sources.render_jumpstart("llama", "jumpstart:deepseek-llm-r1-distill-qwen-1-5b", g5,
                                  labels=managed.labels("llama"))
    js["spec"].update(extra)
    crd = yaml.load(JUMPSTART_CRD.read_text(), Loader=yaml.CSafeLoader)
    (v1,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    jsonschema.validate(js, v1["schema"]["openAPIV3Schema"])
    assert extra["intelligentRoutingSpec"] == {"enabled": True, "routingStrategy": routing}
    assert ("kvCacheSpec" in extra) is (kv is not None)
    auto = extra["autoScalingSpec"]
    assert (auto["minReplicaCount"], auto["maxReplicaCount"], auto["cooldownPeriod"]) == (
        1, 4, 120)
    assert auto["prometheusTrigger"]["query"] == \
        'sum(vllm:num_requests_waiting{model_name="llama"})'


def test_the_crd_refuses_an_l2_backend_it_does_not_know() -> None:
    config = _render()
    config["spec"]["kvCacheSpec"] = {"enableL2Cache": True,
                                     "l2CacheSpec": {"l2CacheBackend": "memcached"}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(config, schema())


@pytest.mark.parametrize(("body", "field"), [
    ({"kind": "managed", "kv_cache": "redis"}, "kv_cache_url"),
    ({"kind": "managed", "kv_cache": "l1", "kv_cache_url": "redis://x:6379"}, "kv_cache_url"),
    ({"kind": "managed", "kv_cache": "redis", "kv_cache_url": "http://x"}, "kv_cache_url"),
    ({"kind": "managed", "routing": "kvaware", "image": "docker.io/lmsysorg/sglang:latest"},
     "routing"),
    ({"kind": "self_managed", "routing": "session"}, "routing"),
    ({"kind": "self_managed", "kv_cache": "l1"}, "kv_cache")])
def test_bad_combinations_are_refused_naming_the_field(body: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        options.check(body)
    assert err.value.extra["field"] == field


def test_autoscaling_bounds_and_server_are_checked() -> None:
    with pytest.raises(InvalidInput) as err:
        options.autoscaling_spec("x", {**AUTO, "min_replicas": 5}, AMP)
    assert err.value.extra["field"] == "autoscaling.max_replicas"
    with pytest.raises(InvalidInput):
        options.autoscaling_spec("x", AUTO, "http://prometheus:9090")
