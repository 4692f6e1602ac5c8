"""Every upstream CRD in ../shared/crds loads, serves its kinds, and rejects invalid objects
with 422 and a field path (plus defaults, pruning and enum/pattern checks)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.sandbox_kube.conftest import CRDS

CRD_FILES = sorted(CRDS.resolve().glob("*/*.yaml"))
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


@functools.cache
def _load(path: Path) -> dict[str, Any]:
    return next(d for d in yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader) if d)


def _collection(crd: dict[str, Any], version: str) -> str:
    spec = crd["spec"]
    base = f"/apis/{spec['group']}/{version}"
    if spec["scope"] == "Namespaced":
        base += "/namespaces/default"
    return f"{base}/{spec['names']['plural']}"


def _storage_version(crd: dict[str, Any]) -> dict[str, Any]:
    return next(v for v in crd["spec"]["versions"] if v.get("storage"))


def _wrong_value(schema: dict[str, Any]) -> Any:
    return {
        "string": 12345,
        "integer": "not-a-number",
        "boolean": "maybe",
        "number": "nan?",
        "array": "not-a-list",
        "object": "not-an-object",
    }.get(schema.get("type", ""))


def test_upstream_crds_exist() -> None:
    assert len(CRD_FILES) >= 15, CRDS


@pytest.mark.parametrize("path", CRD_FILES, ids=lambda p: p.name)
def test_crd_loads_and_rejects_wrong_types(http: httpx.Client, path: Path) -> None:
    crd = _load(path)
    resp = http.post(CRD_PATH, json=crd)
    assert resp.status_code in (201, 409), resp.text
    version = _storage_version(crd)
    listing = http.get(f"/apis/{crd['spec']['group']}/{version['name']}").json()
    assert crd["spec"]["names"]["plural"] in [r["name"] for r in listing["resources"]]

    spec_schema = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    field, sub = next(
        (k, v)
        for k, v in sorted(spec_schema.get("properties", {}).items())
        if _wrong_value(v) is not None
        and not v.get("x-kubernetes-int-or-string")
        and "anyOf" not in v
    )
    obj = {
        "apiVersion": f"{crd['spec']['group']}/{version['name']}",
        "kind": crd["spec"]["names"]["kind"],
        "metadata": {"name": "invalid-one"},
        "spec": {field: _wrong_value(sub)},
    }
    bad = http.post(_collection(crd, version["name"]), json=obj)
    assert bad.status_code == 422, bad.text
    status = bad.json()
    assert status["reason"] == "Invalid" and status["details"]["kind"] == obj["kind"]
    fields = [c["field"] for c in status["details"]["causes"]]
    assert f"spec.{field}" in fields
    assert f"must be of type {sub['type']}" in status["message"]


def test_rayjob_required_enum_default_and_pruning(http: httpx.Client) -> None:
    crd = _load(CRDS / "kuberay" / "ray.io_rayjobs.yaml")
    http.post(CRD_PATH, json=crd)
    base = _collection(crd, "v1")
    ok = http.post(
        base,
        json={
            "apiVersion": "ray.io/v1",
            "kind": "RayJob",
            "metadata": {"name": "pruned"},
            "spec": {"entrypoint": "python x.py", "notAField": 1},
        },
    )
    assert ok.status_code == 201, ok.text
    assert "notAField" not in ok.json()["spec"]
    assert 'unknown field "spec.notAField"' in ok.headers.get("warning", "")
    assert ok.json()["spec"]["submissionMode"] == "K8sJobMode"  # schema default
    strict = http.post(
        base,
        params={"fieldValidation": "Strict"},
        json={
            "apiVersion": "ray.io/v1",
            "kind": "RayJob",
            "metadata": {"name": "strict"},
            "spec": {"notAField": 1},
        },
    )
    assert strict.status_code == 400 and "spec.notAField" in strict.json()["message"]


def test_nodepool_required_enum_pattern_and_defaults(http: httpx.Client) -> None:
    crd = _load(CRDS / "karpenter" / "karpenter.sh_nodepools.yaml")
    http.post(CRD_PATH, json=crd)
    version = _storage_version(crd)["name"]
    resp = http.post(
        _collection(crd, version),
        json={
            "apiVersion": f"karpenter.sh/{version}",
            "kind": "NodePool",
            "metadata": {"name": "gpu"},
            "spec": {"template": {"spec": {}}},
        },
    )
    assert resp.status_code == 422
    fields = {c["field"] for c in resp.json()["details"]["causes"]}
    assert "spec.template.spec.nodeClassRef" in fields
    assert "spec.template.spec.requirements" in fields
    template = {
        "spec": {
            "nodeClassRef": {
                "group": "karpenter.k8s.aws",
                "kind": "EC2NodeClass",
                "name": "default",
            },
            "requirements": [],
        }
    }
    bad = http.post(
        _collection(crd, version),
        json={
            "apiVersion": f"karpenter.sh/{version}",
            "kind": "NodePool",
            "metadata": {"name": "gpu"},
            "spec": {
                "template": template,
                "disruption": {"consolidationPolicy": "Sometimes", "consolidateAfter": "soon"},
            },
        },
    )
    assert bad.status_code == 422
    causes = {c["field"]: c["reason"] for c in bad.json()["details"]["causes"]}
    assert causes["spec.disruption.consolidationPolicy"] == "FieldValueNotSupported"
    assert causes["spec.disruption.consolidateAfter"] == "FieldValueInvalid"
    good = http.post(
        _collection(crd, version),
        json={
            "apiVersion": f"karpenter.sh/{version}",
            "kind": "NodePool",
            "metadata": {"name": "gpu"},
            "spec": {"template": template, "disruption": {"consolidateAfter": "5m"}},
        },
    )
    assert good.status_code == 201, good.text
    assert good.json()["spec"]["disruption"]["consolidationPolicy"] == "WhenEmptyOrUnderutilized"
    assert good.json()["spec"]["disruption"]["budgets"] == [{"nodes": "10%"}]


def test_custom_resource_scale_subresource(http: httpx.Client) -> None:
    crd = _load(CRDS / "lws" / "leaderworkerset.x-k8s.io_leaderworkersets.yaml")
    http.post(CRD_PATH, json=crd)
    base = _collection(crd, "v1")
    lws = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "llm"},
        "spec": {
            "replicas": 1,
            "leaderWorkerTemplate": {
                "size": 2,
                "workerTemplate": {
                    "spec": {"containers": [{"name": "w", "image": "vllm/vllm-openai"}]}
                },
            },
        },
    }
    assert http.post(base, json=lws).status_code == 201
    scale = http.get(f"{base}/llm/scale").json()
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 1
    patched = http.patch(
        f"{base}/llm/scale",
        json={"spec": {"replicas": 3}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert patched.json()["spec"]["replicas"] == 3
    assert http.get(f"{base}/llm").json()["spec"]["replicas"] == 3
