"""The Kubeflow operators podplane renders (HyperPod dependencies chart 0.1.0,
`charts/training-operators` and `charts/mpi-operator`): compact CRDs that are structural and
agree with the upstream PyTorchJob CRD, and the chart's images, accounts and RBAC."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from podplane.domain import manifests
from podplane.domain.dependencies import CORE_UNITS
from podplane_sandbox.kube import schema as sandbox_schema

REPO = Path(__file__).resolve().parents[2]
# ../shared/crds beside the checkout (read-only reference; a worktree sits one level deeper)
SHARED_CRDS = next(p / "shared" / "crds" for p in REPO.parents
                   if (p / "shared" / "crds").is_dir())
UPSTREAM_PYTORCH = SHARED_CRDS / "kubeflow-training-operator" / "kubeflow.org_pytorchjobs.yaml"
UNITS = {u.name: u for u in CORE_UNITS if u.name in ("kubeflow-training-operator",
                                                        "mpi-operator")}
JUNCTORS = ("allOf", "anyOf", "oneOf", "not")
FORBIDDEN_IN_JUNCTORS = ("description", "type", "default", "additionalProperties", "nullable")
INT_OR_STRING = [{"type": "integer"}, {"type": "string"}]


def render(unit: str) -> list[dict[str, Any]]:
    u = UNITS[unit]
    return manifests.for_unit(u.name, u.version or "", "us-west-2")


def by_kind(objs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objs if o["kind"] == kind}


def all_crds() -> dict[str, dict[str, Any]]:
    return {**by_kind(render("kubeflow-training-operator"), "CustomResourceDefinition"),
            **by_kind(render("mpi-operator"), "CustomResourceDefinition")}


@functools.cache
def upstream() -> dict[str, Any]:
    return dict(yaml.load(UPSTREAM_PYTORCH.read_text(), Loader=yaml.CSafeLoader))


# Kubernetes docs, "Specifying a structural schema": every node has a type (unless it is
# int-or-string or preserves unknown fields); nothing typed, defaulted or described inside
# allOf/anyOf/oneOf/not, and every field they name is also named outside; metadata restricts
# only name and generateName. Properties and additionalProperties exclude each other.
def structural_violations(node: dict[str, Any], path: str = "", junctor: bool = False
                          ) -> list[str]:
    out: list[str] = []
    free = (node.get("x-kubernetes-int-or-string") is True
            or node.get("x-kubernetes-preserve-unknown-fields") is True)
    if junctor:
        out += [f"{path}: {k} inside a junctor" for k in FORBIDDEN_IN_JUNCTORS if k in node]
    elif not node.get("type") and not free:
        out.append(f"{path}: no type")
    if "properties" in node and "additionalProperties" in node:
        out.append(f"{path}: properties and additionalProperties together")
    for key in JUNCTORS:
        subs = node.get(key) or []
        if free and key == "anyOf" and subs == INT_OR_STRING:
            continue  # the one typed junctor the docs allow, for int-or-string
        for i, sub in enumerate(subs if isinstance(subs, list) else [subs]):
            named = set(sub.get("properties") or {}) - set(node.get("properties") or {})
            out += [f"{path}.{key}[{i}]: {n} only inside a junctor" for n in sorted(named)]
            out += structural_violations(sub, f"{path}.{key}[{i}]", junctor=True)
    for name, sub in (node.get("properties") or {}).items():
        out += structural_violations(sub, f"{path}.{name}", junctor)
    if isinstance(node.get("additionalProperties"), dict):
        out += structural_violations(node["additionalProperties"], f"{path}.*", junctor)
    if isinstance(node.get("items"), dict):
        out += structural_violations(node["items"], f"{path}[]", junctor)
    return out


def _metadata_violations(root: dict[str, Any]) -> list[str]:
    metadata = (root.get("properties") or {}).get("metadata") or {}
    extra = set(metadata) - {"type", "properties"}
    extra |= set(metadata.get("properties") or {}) - {"name", "generateName"}
    return [f"metadata restricts {k}" for k in sorted(extra)]


def test_the_structural_check_can_fail() -> None:
    bad = {"type": "object", "properties": {
        "a": {"properties": {}},
        "b": {"type": "object", "anyOf": [{"type": "string", "properties": {"c": {}}}]}}}
    found = structural_violations(bad)
    assert ".a: no type" in found
    assert ".b.anyOf[0]: type inside a junctor" in found
    assert ".b.anyOf[0]: c only inside a junctor" in found
    assert structural_violations(upstream()["spec"]["versions"][0]["schema"][
        "openAPIV3Schema"]) == []  # upstream's generated CRD is structural


def test_both_units_install_after_nodes_with_their_crds_first() -> None:
    assert {u.stage for u in UNITS.values()} == {"nodes"}
    for unit in UNITS:
        objs = render(unit)
        assert objs[0]["kind"] == "CustomResourceDefinition"
        assert objs[-1]["kind"] == "Deployment"  # observed for the installed version


@pytest.mark.parametrize("name", ["pytorchjobs.kubeflow.org", "tfjobs.kubeflow.org",
                                  "mxjobs.kubeflow.org", "xgboostjobs.kubeflow.org",
                                  "paddlejobs.kubeflow.org", "mpijobs.kubeflow.org"])
def test_every_crd_is_structural_and_small(name: str) -> None:
    crd = all_crds()[name]
    spec = crd["spec"]
    assert name == f"{spec['names']['plural']}.{spec['group']}"
    (version,) = spec["versions"]
    root = version["schema"]["openAPIV3Schema"]
    assert structural_violations(root) == []
    assert _metadata_violations(root) == []
    assert len(yaml.safe_dump(crd)) < 8_000  # the chart's generated ones are ~0.5 MB each
    replicas = next(v for k, v in root["properties"]["spec"]["properties"].items()
                    if k.endswith("ReplicaSpecs"))
    template = replicas["additionalProperties"]["properties"]["template"]
    assert template == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def test_crd_identity_matches_the_charts() -> None:
    crds = all_crds()
    kinds = {c["spec"]["names"]["kind"]: c["spec"]["versions"][0]["name"]
             for c in crds.values()}
    assert kinds == {"PyTorchJob": "v1", "TFJob": "v1", "MXJob": "v1", "XGBoostJob": "v1",
                     "PaddleJob": "v1", "MPIJob": "v2beta1"}
    assert {c["spec"]["scope"] for c in crds.values()} == {"Namespaced"}
    mpi = crds["mpijobs.kubeflow.org"]["spec"]["versions"][0]
    assert mpi["subresources"] == {"status": {}} and "additionalPrinterColumns" not in mpi
    paddle = crds["paddlejobs.kubeflow.org"]["spec"]["versions"][0]["subresources"]
    assert paddle["scale"]["specReplicasPath"] == ".spec.paddleReplicaSpecs.Worker.replicas"
    mx = crds["mxjobs.kubeflow.org"]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert mx["properties"]["spec"]["required"] == ["jobMode", "mxReplicaSpecs"]


def test_pytorchjob_crd_has_upstreams_identity() -> None:
    ours, theirs = all_crds()["pytorchjobs.kubeflow.org"], upstream()
    assert ours["metadata"]["name"] == theirs["metadata"]["name"]
    for key in ("group", "names", "scope"):
        assert ours["spec"][key] == theirs["spec"][key], key
    assert len(ours["spec"]["versions"]) == len(theirs["spec"]["versions"]) == 1
    mine, up = ours["spec"]["versions"][0], theirs["spec"]["versions"][0]
    for key in ("name", "served", "storage", "subresources", "additionalPrinterColumns"):
        assert mine[key] == up[key], key


def _job(**spec: Any) -> dict[str, Any]:
    worker = {"replicas": 2, "restartPolicy": "OnFailure", "template": {"spec": {
        "containers": [{"name": "pytorch", "image": "docker.io/pytorch/pytorch:2.5.1-cuda12.4"
                        "-cudnn9-runtime", "command": ["torchrun", "train.py"],
                        "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}
    body = {"pytorchReplicaSpecs": {"Worker": worker}, **spec}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "train", "namespace": "default"}, "spec": body}


GOOD = {
    "workers-only": _job(),
    "master-and-workers": _job(pytorchReplicaSpecs={
        "Master": {"replicas": 1, "restartPolicy": "Never",
                   "template": {"spec": {"containers": [{"name": "pytorch", "image": "x"}]}}},
        "Worker": {"replicas": 3, "template": {"metadata": {"labels": {"a": "b"}},
                                               "spec": {"containers": []}}}}),
    "elastic": _job(nprocPerNode="8", elasticPolicy={
        "minReplicas": 1, "maxReplicas": 4, "maxRestarts": 3, "rdzvBackend": "c10d",
        "rdzvConf": [{"key": "timeout", "value": "900"}]}),
    "run-policy": _job(runPolicy={
        "cleanPodPolicy": "None", "backoffLimit": 3, "ttlSecondsAfterFinished": 600,
        "activeDeadlineSeconds": 86400, "suspend": True,
        "schedulingPolicy": {"minAvailable": 2, "queue": "team-a",
                             "minResources": {"cpu": "8", "nvidia.com/gpu": 2}}}),
}
BAD = {
    "replicas-as-text": ("spec.pytorchReplicaSpecs.Worker.replicas",
                         lambda j: j["spec"]["pytorchReplicaSpecs"]["Worker"].update(
                             replicas="two")),
    "no-replica-specs": ("spec.pytorchReplicaSpecs",
                         lambda j: j["spec"].pop("pytorchReplicaSpecs")),
    "backoff-as-text": ("spec.runPolicy.backoffLimit",
                        lambda j: j["spec"].update(runPolicy={"backoffLimit": "3"})),
    "quantity-as-list": ("spec.runPolicy.schedulingPolicy.minResources.cpu",
                         lambda j: j["spec"].update(runPolicy={"schedulingPolicy": {
                             "minResources": {"cpu": ["8"]}}})),
}


def _ours() -> dict[str, Any]:
    return dict(all_crds()["pytorchjobs.kubeflow.org"]["spec"]["versions"][0]["schema"][
        "openAPIV3Schema"])


def _theirs() -> dict[str, Any]:
    return dict(upstream()["spec"]["versions"][0]["schema"]["openAPIV3Schema"])


@pytest.mark.parametrize("name", sorted(GOOD))
def test_jobs_upstream_accepts_ours_accepts_and_keeps(name: str) -> None:
    job = GOOD[name]
    jsonschema.validate(job, _theirs())
    jsonschema.validate(job, _ours())
    outcome = sandbox_schema.check(_ours(), copy.deepcopy(job))  # the API server's checks
    assert outcome.causes == [] and outcome.unknown == []
    # nothing the user wrote is pruned: the pod templates come back whole
    assert outcome.value["spec"]["pytorchReplicaSpecs"] == job["spec"]["pytorchReplicaSpecs"]


@pytest.mark.parametrize("name", sorted(BAD))
def test_jobs_upstream_refuses_ours_refuses(name: str) -> None:
    field, spoil = BAD[name]
    job = copy.deepcopy(GOOD["workers-only"])
    spoil(job)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(job, _theirs())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(job, _ours())
    outcome = sandbox_schema.check(_ours(), job)
    assert [c["field"] for c in outcome.causes] == [field]


def test_mpijob_defaults_and_refusals() -> None:
    crd = all_crds()["mpijobs.kubeflow.org"]
    root = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    launcher = {"replicas": 1, "template": {"spec": {"containers": [{"name": "l"}]}}}
    job = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "m"},
           "spec": {"mpiReplicaSpecs": {"Launcher": launcher, "Worker": launcher}}}
    outcome = sandbox_schema.check(root, copy.deepcopy(job))
    assert outcome.causes == []
    spec = outcome.value["spec"]
    assert (spec["slotsPerWorker"], spec["mpiImplementation"], spec["sshAuthMountPath"]) == \
        (1, "OpenMPI", "/root/.ssh")
    job["spec"]["mpiImplementation"] = "LAM"
    job["spec"]["slotsPerWorker"] = "eight"
    refused = sandbox_schema.check(root, job)
    assert {c["field"] for c in refused.causes} == {"spec.mpiImplementation",
                                                    "spec.slotsPerWorker"}


def test_training_operator_is_the_charts() -> None:
    objs = render("kubeflow-training-operator")
    (dep,) = by_kind(objs, "Deployment").values()
    assert (dep["metadata"]["namespace"], dep["metadata"]["name"]) == (
        "kubeflow", "dependencies-training-operators")
    pod = dep["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    assert c["image"] == "kubeflow/training-operator:v1-855e096"
    assert c["command"] == ["/manager", "--enable-scheme=pytorchjob", "--enable-scheme=tfjob",
                            "--enable-scheme=mxjob", "--enable-scheme=xgboostjob",
                            "--enable-scheme=paddlejob"]
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": 8081}
    assert pod["serviceAccountName"] == "training-operator"
    assert dep["spec"]["selector"]["matchLabels"] == {
        "control-plane": "kubeflow-training-operator"}
    assert dep["spec"]["selector"]["matchLabels"].items() <= \
        dep["spec"]["template"]["metadata"]["labels"].items()
    (svc,) = by_kind(objs, "Service").values()
    assert svc["spec"]["selector"] == dep["spec"]["selector"]["matchLabels"]
    assert svc["spec"]["ports"] == [{"name": "monitoring-port", "port": 8080,
                                     "targetPort": 8080}]
    assert ("kubeflow", "training-operator") in {
        (o["metadata"]["namespace"], o["metadata"]["name"])
        for o in objs if o["kind"] == "ServiceAccount"}
    roles = by_kind(objs, "ClusterRole")
    rules = roles["training-operator"]["rules"]
    assert {"apiGroups": [""], "resources": ["pods", "services", "endpoints", "events"],
            "verbs": ["*"]} in rules
    assert "pytorchjobs/finalizers" in rules[0]["resources"]
    assert roles["kubeflow-training-admin"]["aggregationRule"] == {"clusterRoleSelectors": [
        {"matchLabels": {
            "rbac.authorization.kubeflow.org/aggregate-to-kubeflow-training-admin": "true"}}]}
    assert roles["kubeflow-training-edit"]["metadata"]["labels"][
        "rbac.authorization.kubeflow.org/aggregate-to-kubeflow-training-admin"] == "true"
    (binding,) = by_kind(objs, "ClusterRoleBinding").values()
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "training-operator",
                                    "namespace": "kubeflow"}]


def test_mpi_operator_is_the_charts() -> None:
    objs = render("mpi-operator")
    (dep,) = by_kind(objs, "Deployment").values()
    assert (dep["metadata"]["namespace"], dep["metadata"]["name"]) == (
        "kube-system", "dependencies-mpi-operator")
    pod = dep["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    assert c["image"] == "mpioperator/mpi-operator:0.5"
    assert c["args"] == ["-alsologtostderr", "-stderrthreshold=INFO", "-v=4"]
    assert pod["serviceAccountName"] == "dependencies-mpi-operator"
    assert pod["tolerations"] == [{"key": "sagemaker.amazonaws.com/node-health-status",
                                   "operator": "Equal", "value": "Unschedulable",
                                   "effect": "NoSchedule"}]
    roles = by_kind(objs, "ClusterRole")
    assert set(roles) == {"dependencies-mpi-operator",
                          "dependencies-mpi-operator-kubeflow-mpijobs-admin",
                          "dependencies-mpi-operator-kubeflow-mpijobs-edit",
                          "dependencies-mpi-operator-kubeflow-mpijobs-view"}
    rules = roles["dependencies-mpi-operator"]["rules"]
    assert {"apiGroups": ["kubeflow.org"], "verbs": ["*"],
            "resources": ["mpijobs", "mpijobs/finalizers", "mpijobs/status"]} in rules
    assert {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create"]} in rules
    (binding,) = by_kind(objs, "ClusterRoleBinding").values()
    assert binding["subjects"] == [{"kind": "ServiceAccount",
                                    "name": "dependencies-mpi-operator",
                                    "namespace": "kube-system"}]
    assert "mpi-operator" in by_kind(objs, "Namespace")  # the chart creates it too


def test_crd_schemas_are_not_shared_between_objects() -> None:
    """Mutating one rendered CRD (a caller adding a field) leaves the next render alone."""
    first = all_crds()["tfjobs.kubeflow.org"]
    first["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "properties"]["runPolicy"]["properties"].clear()
    again = all_crds()["pytorchjobs.kubeflow.org"]["spec"]["versions"][0]["schema"]
    assert "backoffLimit" in again["openAPIV3Schema"]["properties"]["spec"]["properties"][
        "runPolicy"]["properties"]
