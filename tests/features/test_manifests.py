"""What the features render, checked against the upstream CRDs in ../shared/crds: the compact
KubeRay and KEDA CRDs keep upstream's identity and required fields and are structural; the
NodePool is valid under Karpenter's own v1 schema; the node class follows the documented
HyperpodNodeClass facts; every object carries the feature's ownership labels."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from podplane.domain.features import catalog
from podplane.domain.features.render import ClusterFacts, resources
from podplane.domain.manifests.autoscaling import node_class, node_pool
from podplane.domain.manifests.feature_crds import KEDA_CRDS, KUBERAY_CRDS, compact_crd
from tests.clusters.test_kubeflow_manifests import SHARED_CRDS, structural_violations

FACTS = ClusterFacts("gpu", "gpu", "gpu", "123456789012", "us-west-2", "podplane-gpu-b",
                     "arn:aws:sagemaker:us-west-2:123456789012:cluster/abc123")
UPSTREAM = {c.kind: SHARED_CRDS / ("kuberay" if c.group == "ray.io" else "keda") /
            f"{c.group}_{c.plural}.yaml" for c in (*KUBERAY_CRDS, *KEDA_CRDS)}


@functools.cache
def upstream(path: Path) -> dict[str, Any]:
    return dict(yaml.load(path.read_text(), Loader=yaml.CSafeLoader))


@pytest.mark.parametrize("ident", [*KUBERAY_CRDS, *KEDA_CRDS], ids=lambda c: c.kind)
def test_compact_crd_keeps_upstreams_identity(ident: Any) -> None:
    ours, theirs = compact_crd(ident, "x", "1"), upstream(UPSTREAM[ident.kind])
    assert ours["metadata"]["name"] == theirs["metadata"]["name"]
    for key in ("group", "names", "scope"):
        assert ours["spec"][key] == theirs["spec"][key], key
    mine = {v["name"]: v for v in ours["spec"]["versions"]}
    up = {v["name"]: v for v in theirs["spec"]["versions"]}
    assert mine.keys() == up.keys()
    for name, v in up.items():
        for key in ("served", "storage", "subresources"):
            assert mine[name][key] == v[key], (name, key)
        assert mine[name].get("deprecated", False) == v.get("deprecated", False)
        root, their_root = (mine[name]["schema"]["openAPIV3Schema"],
                            v["schema"]["openAPIV3Schema"])
        assert root.get("required") == their_root.get("required")
        assert root["properties"]["spec"].get("required") == \
            their_root["properties"]["spec"].get("required")
        assert structural_violations(root) == []


def _validate(obj: dict[str, Any], crd: dict[str, Any], version: str) -> None:
    (v,) = [x for x in crd["spec"]["versions"] if x["name"] == version]
    jsonschema.validate(obj, v["schema"]["openAPIV3Schema"])


def test_nodepool_is_valid_under_karpenters_schema() -> None:
    crd = upstream(SHARED_CRDS / "karpenter" / "karpenter.sh_nodepools.yaml")
    pool = node_pool("gpu-a")
    _validate(pool, crd, "v1")
    bad = node_pool("gpu-a")
    del bad["spec"]["template"]["spec"]["nodeClassRef"]["kind"]
    with pytest.raises(jsonschema.ValidationError):
        _validate(bad, crd, "v1")


def test_node_class_follows_the_documented_facts() -> None:
    doc = (SHARED_CRDS / "karpenter" / "HYPERPOD_NODECLASS.md").read_text()
    nc = node_class("gpu-a")
    assert nc["apiVersion"] == "karpenter.sagemaker.amazonaws.com/v1" and \
        "karpenter.sagemaker.amazonaws.com/v1" in doc
    assert nc["kind"] == "HyperpodNodeClass" and nc["spec"]["instanceGroups"] == ["gpu-a"]
    ref = node_pool("gpu-a")["spec"]["template"]["spec"]["nodeClassRef"]
    assert ref == {"group": "karpenter.sagemaker.amazonaws.com", "kind": "HyperpodNodeClass",
                   "name": nc["metadata"]["name"]}
    with pytest.raises(Exception, match="at most 10"):
        catalog.check_settings(catalog.feature(catalog.MANAGED_AUTOSCALING),
                               {"groups": [f"g{i}" for i in range(11)]})


SAMPLES = {
    "RayJob": {"apiVersion": "ray.io/v1", "kind": "RayJob",
               "metadata": {"name": "j", "namespace": "default"},
               "spec": {"entrypoint": "python train.py", "rayClusterSpec": {
                   "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {
                       "containers": [{"name": "head",
                                       "image": "docker.io/rayproject/ray:2.40.0"}]}}}}}},
    "ScaledObject": {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
                     "metadata": {"name": "s", "namespace": "default"},
                     "spec": {"scaleTargetRef": {"name": "router"},
                              "triggers": [{"type": "cpu", "metadata": {"value": "60"}}]}},
}


@pytest.mark.parametrize("kind", list(SAMPLES))
def test_what_upstream_accepts_ours_accepts_and_both_refuse_a_missing_field(kind: str) -> None:
    ident = next(c for c in (*KUBERAY_CRDS, *KEDA_CRDS) if c.kind == kind)
    version = SAMPLES[kind]["apiVersion"].split("/")[1]
    ours, theirs = compact_crd(ident, "x", "1"), upstream(UPSTREAM[kind])
    _validate(SAMPLES[kind], theirs, version)
    _validate(SAMPLES[kind], ours, version)
    if kind == "ScaledObject":
        bad = {**SAMPLES[kind], "spec": {"scaleTargetRef": {"name": "router"}}}
        for crd in (ours, theirs):
            with pytest.raises(jsonschema.ValidationError, match="triggers"):
                _validate(bad, crd, version)


@pytest.mark.parametrize("name", ["kuberay", "keda", "tiered-checkpointing",
                                  "managed-autoscaling"])
def test_every_object_is_marked_as_the_features(name: str) -> None:
    settings = catalog.check_settings(catalog.feature(name), {"groups": ["gpu-a"]}
                                      if name == "managed-autoscaling" else {})
    made = resources(name, True, settings, FACTS)
    kube = [r.desired for r in made if r.kind == "kube"]
    assert kube
    for obj in kube:
        labels = obj["metadata"]["labels"]
        assert labels["podplane.io/feature"] == name
        assert labels["app.kubernetes.io/managed-by"] == "podplane"
    for role in (r.desired for r in made if r.kind == "iam-role"):
        assert role["tags"]["podplane:feature"] == name
        for st in role["policy"]["Statement"]:
            assert "*" not in str(st["Action"]) and st["Resource"] != "*"
