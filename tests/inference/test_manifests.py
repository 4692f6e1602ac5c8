"""Every endpoint manifest is judged by an outside source: the models the official Kubernetes
Python client generates from the Kubernetes OpenAPI document (`kubernetes` package,
`openapi_types` / `attribute_map`): every field must exist where it is written, with the
type the API declares, and required fields must be present (the models refuse None). Also the
request's own rules: tensor parallelism against the instance type's GPUs (domain.catalog)."""

from __future__ import annotations

import json
import re
from typing import Any

import kubernetes.client as k8s
import pytest
from kubernetes.client import ApiClient

from podplane.domain.catalog import lookup
from podplane.domain.errors import InvalidInput
from podplane.domain.inference.pool import pool_deployment
from podplane.domain.inference.render import check_fits, render

BASE = {"name": "llm", "instance_group": "workers", "model": "Qwen/Qwen2.5-7B-Instruct",
        "engine": "vllm", "image": None, "tensor_parallel": 1, "max_model_len": None,
        "dtype": "auto", "replicas": 1, "exposure": "service"}
VARIANTS = [{}, {"engine": "sglang", "max_model_len": 8192, "exposure": "load_balancer"},
            {"model": "s3://models-bucket/llama-3-8b/", "tensor_parallel": 8, "replicas": 3,
             "dtype": "bfloat16", "image": "docker.io/vllm/vllm-openai:latest"}]
SCALARS = {"str": str, "int": int, "bool": bool, "float": (int, float), "datetime": str}


def strict(value: Any, kind: str, where: str) -> list[str]:
    """Differences between a JSON value and the client's declared type `kind`."""
    if kind == "object":  # IntOrString, Quantity, RawExtension: any JSON
        return []
    if kind in SCALARS:
        ok = isinstance(value, SCALARS[kind]) and not (kind == "int" and value is True)
        return [] if ok else [f"{where}: {value!r} is not {kind}"]
    if m := re.fullmatch(r"[Ll]ist\[(.+)\]", kind):
        if not isinstance(value, list):
            return [f"{where}: not a list"]
        return [e for i, v in enumerate(value) for e in strict(v, m[1], f"{where}[{i}]")]
    if m := re.fullmatch(r"(?:dict\(str, (.+)\)|Dict\[str, (.+)\])", kind):
        inner = m[1] or m[2]
        return [e for k, v in value.items() for e in strict(v, inner, f"{where}.{k}")]
    model = getattr(k8s, kind)
    by_json = {json_name: attr for attr, json_name in model.attribute_map.items()}
    errors = [f"{where}.{k}: unknown field of {kind}" for k in value if k not in by_json]
    return errors + [e for k, v in value.items() if k in by_json
                     for e in strict(v, model.openapi_types[by_json[k]], f"{where}.{k}")]


@pytest.mark.parametrize("change", VARIANTS, ids=["vllm-hf", "sglang-lb", "vllm-s3-tp8"])
def test_manifests_are_valid_kubernetes_objects(change: dict[str, Any]) -> None:
    deployment, service = render({**BASE, **change})
    assert strict(deployment, "V1Deployment", "Deployment") == []
    assert strict(service, "V1Service", "Service") == []
    client = ApiClient()  # required fields: the models raise on a missing one
    client.deserialize(json.dumps(deployment), "V1Deployment", "application/json")
    client.deserialize(json.dumps(service), "V1Service", "application/json")
    pod = deployment["spec"]["template"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= \
        pod["metadata"]["labels"].items()  # apps/v1 refuses a selector the pods do not match
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    engine = pod["spec"]["containers"][0]
    tp = BASE["tensor_parallel"] if "tensor_parallel" not in change else change["tensor_parallel"]
    assert engine["resources"]["limits"] == {"nvidia.com/gpu": str(tp)}
    assert engine["ports"][0]["containerPort"] == service["spec"]["ports"][0]["port"]


def test_a_misspelt_field_is_caught_by_the_judge() -> None:
    deployment, _ = render(BASE)
    deployment["spec"]["template"]["spec"]["containers"][0]["resource"] = {}
    assert strict(deployment, "V1Deployment", "Deployment") == [
        "Deployment.spec.template.spec.containers[0].resource: unknown field of V1Container"]


def test_tensor_parallel_against_the_instance_type() -> None:
    check_fits({**BASE, "tensor_parallel": 8}, lookup("ml.p5.48xlarge"))
    with pytest.raises(InvalidInput) as err:
        check_fits({**BASE, "tensor_parallel": 2}, lookup("ml.g5.8xlarge"))
    assert err.value.extra["field"] == "tensor_parallel"
    with pytest.raises(InvalidInput) as err:
        check_fits(BASE, lookup("ml.m5.xlarge"))
    assert err.value.extra["field"] == "instance_group"


def test_sglang_cannot_read_s3() -> None:
    with pytest.raises(InvalidInput) as err:
        render({**BASE, "engine": "sglang", "model": "s3://b/m"})
    assert err.value.extra["field"] == "model"


def test_router_objects_are_valid_kubernetes_objects() -> None:
    """An SGLang endpoint with a router: the worker Deployment, the Service (selecting the
    router), the ServiceAccount, Role, RoleBinding and the router Deployment, each judged by
    the client's model of its kind; the router pods never match the workers' selector."""
    objs = render({**BASE, "engine": "sglang", "router": "cache_aware"})
    models = ["V1Deployment", "V1Service", "V1ServiceAccount", "V1Role", "V1RoleBinding",
              "V1Deployment"]
    assert [o["kind"] for o in objs] == [m[2:] for m in models]
    client = ApiClient()
    for obj, model in zip(objs, models, strict=True):
        assert strict(obj, model, obj["kind"]) == []
        client.deserialize(json.dumps(obj), model, "application/json")
    workers, service, account, role, binding, router = objs
    router_pod = router["spec"]["template"]["metadata"]["labels"]
    assert not workers["spec"]["selector"]["matchLabels"].items() <= router_pod.items()
    assert service["spec"]["selector"].items() <= router_pod.items()
    assert {o["metadata"]["name"] for o in (account, role, binding, router)} == {"llm-router"}
    assert role["rules"] == [{"apiGroups": [""], "resources": ["pods"],
                              "verbs": ["get", "list", "watch"]}]
    assert binding["subjects"][0]["name"] == router["spec"]["template"]["spec"][
        "serviceAccountName"] == "llm-router"
    for policy in ("round_robin", None):
        kinds = [o["kind"] for o in render({**BASE, "engine": "sglang", "router": policy})]
        assert len(kinds) == (6 if policy else 2)
    with pytest.raises(InvalidInput) as refused:
        render({**BASE, "router": "cache_aware"})  # vLLM
    assert refused.value.extra["field"] == "router"


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_the_engine_sleeps_before_sigterm_within_its_grace_period(engine: str) -> None:
    """Endpoint pods keep serving while their removal propagates and generations finish
    (domain/inference/shutdown.py); warm-pool pods drain by assignment instead."""
    deployment, _ = render({**BASE, "engine": engine})
    pod = deployment["spec"]["template"]["spec"]
    hook = pod["containers"][0]["lifecycle"]["preStop"]["exec"]["command"]
    assert hook == ["sleep", "90"]
    assert pod["terminationGracePeriodSeconds"] == 120 > int(hook[1])
    pool = pool_deployment({**BASE, "engine": engine})["spec"]["template"]["spec"]
    assert "lifecycle" not in pool["containers"][0]
    assert "terminationGracePeriodSeconds" not in pool
