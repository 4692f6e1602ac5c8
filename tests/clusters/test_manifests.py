"""Rendered dependency manifests: pure, versioned, labelled, valid for a real API server, and
what the HyperPod dependencies chart (aws/sagemaker-hyperpod-cli, chart 0.1.0) installs."""

from __future__ import annotations

import re
from typing import Any

import pytest

from podplane.domain import manifests
from podplane.domain.dependencies import CORE_UNITS
from podplane.domain.manifests.common import UNIT_LABEL

MANIFEST_UNITS = [u for u in CORE_UNITS if u.kind == "manifest"]
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
PLUGINS_DIR = "/var/lib/kubelet/device-plugins"


def render(name: str, region: str = "us-west-2") -> list[dict[str, Any]]:
    unit = next(u for u in MANIFEST_UNITS if u.name == name)
    return manifests.for_unit(unit.name, unit.version or "0", region)


def kinds(objs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objs if o["kind"] == kind}


def pod_of(ds: dict[str, Any]) -> dict[str, Any]:
    return dict(ds["spec"]["template"]["spec"])


def host_mounts(pod: dict[str, Any]) -> dict[str, str]:
    """mountPath -> host path for the first container."""
    host = {v["name"]: v["hostPath"]["path"] for v in pod["volumes"] if "hostPath" in v}
    return {m["mountPath"]: host[m["name"]] for m in pod["containers"][0]["volumeMounts"]}


def affinity_types(pod: dict[str, Any]) -> set[str]:
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    (term,) = terms["nodeSelectorTerms"]
    (expr,) = term["matchExpressions"]
    assert expr["key"] == "node.kubernetes.io/instance-type" and expr["operator"] == "In"
    return set(expr["values"])


@pytest.mark.parametrize("unit", MANIFEST_UNITS, ids=lambda u: u.name)
def test_every_unit_is_versioned_labelled_and_valid(unit) -> None:  # type: ignore[no-untyped-def]
    objs = manifests.for_unit(unit.name, unit.version or "0", "us-west-2")
    assert objs
    accounts = {(o["metadata"]["namespace"], o["metadata"]["name"])
                for o in objs if o["kind"] == "ServiceAccount"}
    roles = set(kinds(objs, "ClusterRole"))
    for obj in objs:
        meta = obj["metadata"]
        assert DNS_SUBDOMAIN.match(meta["name"]), meta["name"]
        assert meta["labels"][UNIT_LABEL] == unit.name
        assert meta["annotations"][manifests.VERSION_ANNOTATION] == unit.version
        if obj["kind"] == "DaemonSet":
            spec = obj["spec"]
            # The API server refuses a DaemonSet whose selector does not match its template.
            assert spec["selector"]["matchLabels"].items() <= \
                spec["template"]["metadata"]["labels"].items()
            pod = pod_of(obj)
            volumes = {v["name"] for v in pod.get("volumes", [])}
            for c in pod["containers"]:
                assert {m["name"] for m in c.get("volumeMounts", [])} <= volumes
            account = pod.get("serviceAccountName", "default")
            assert account == "default" or (meta["namespace"], account) in accounts
            assert "nodeSelector" not in pod  # instance-type affinity, as the chart does
        if obj["kind"] == "ClusterRoleBinding":
            assert obj["roleRef"]["name"] in roles
            for s in obj["subjects"]:
                if s["kind"] == "ServiceAccount":
                    assert (s["namespace"], s["name"]) in accounts
    namespaced = {o["metadata"].get("namespace") for o in objs} - {None}
    created = {o["metadata"]["name"] for o in objs if o["kind"] == "Namespace"}
    assert namespaced <= created | {"kube-system"}


def test_daemonset_selectors_stay_what_earlier_versions_installed() -> None:
    """A DaemonSet's selector is immutable: a changed one would make every upgrade fail."""
    for unit in MANIFEST_UNITS:
        for ds in kinds(render(unit.name), "DaemonSet").values():
            assert ds["spec"]["selector"] == {
                "matchLabels": {"app.kubernetes.io/name": ds["metadata"]["name"]}}


def test_health_agent_is_the_charts_regional_private_image() -> None:
    objs = render("hyperpod-health-monitoring-agent", "us-west-2")
    agents = kinds(objs, "DaemonSet")
    assert set(agents) == {"health-monitoring-agent", "health-monitoring-agent-non-nvidia"}
    gpu, neuron = pod_of(agents["health-monitoring-agent"]), \
        pod_of(agents["health-monitoring-agent-non-nvidia"])
    image = gpu["containers"][0]["image"]
    assert image == ("905418368575.dkr.ecr.us-west-2.amazonaws.com/"
                     "hyperpod-health-monitoring-agent:1.0.1892.0_1.0.424.0")
    assert host_mounts(gpu) == {"/var/log": "/var/log/", "/dev/kmsg": "/dev/kmsg",
                                "/etc/localtime": "/etc/localtime"}
    env = {e["name"]: e["valueFrom"]["fieldRef"]["fieldPath"]
           for e in gpu["containers"][0]["env"] if "valueFrom" in e}
    assert env == {"NODE_NAME": "spec.nodeName", "NODE_IP": "status.hostIP"}
    assert {"ml.p5.48xlarge", "ml.g5.12xlarge"} <= affinity_types(gpu)
    assert "ml.m5.xlarge" not in affinity_types(gpu)
    assert "ml.trn1.32xlarge" in affinity_types(neuron)
    assert "--enable-k8s-exporter=false" in neuron["containers"][0]["args"]
    (role,) = kinds(objs, "ClusterRole").values()
    assert {"apiGroups": [""], "resources": ["nodes", "nodes/status"], "verbs": ["patch"]} \
        in role["rules"]


@pytest.mark.parametrize(("region", "host"), [
    ("us-east-1", "767398015722.dkr.ecr.us-east-1.amazonaws.com"),
    ("eu-west-1", "533267293120.dkr.ecr.eu-west-1.amazonaws.com"),
    ("me-south-1", "767398015722.dkr.ecr.us-east-1.amazonaws.com"),  # chart's fallback
])
def test_health_agent_image_host_follows_the_region(region: str, host: str) -> None:
    ds = kinds(render("hyperpod-health-monitoring-agent", region), "DaemonSet")
    assert pod_of(ds["health-monitoring-agent"])["containers"][0]["image"].startswith(host + "/")


def test_deep_health_check_is_rbac_not_a_configmap() -> None:
    objs = render("hyperpod-deep-health-check")
    assert not kinds(objs, "ConfigMap")
    assert kinds(objs, "ServiceAccount")["deep-health-check-service-account"][
        "metadata"]["namespace"] == "aws-hyperpod"
    binding = kinds(objs, "ClusterRoleBinding")["deep-health-check-service-account-role-binding"]
    assert binding["roleRef"]["name"] == "deep-health-check-service-account-role"


@pytest.mark.parametrize("unit", ["hyperpod-job-auto-restart", "hyperpod-patching"])
def test_service_linked_role_bindings(unit: str) -> None:
    (binding,) = kinds(render(unit), "ClusterRoleBinding").values()
    assert binding["subjects"] == [{"kind": "User", "name": "hyperpod-service-linked-role",
                                    "apiGroup": "rbac.authorization.k8s.io"}]


def test_patching_may_evict_pods() -> None:
    (role,) = kinds(render("hyperpod-patching"), "ClusterRole").values()
    assert {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]} \
        in role["rules"]


@pytest.mark.parametrize(("unit", "paths", "sample"), [
    ("nvidia-device-plugin", {PLUGINS_DIR}, "ml.p5.48xlarge"),
    ("aws-efa-k8s-device-plugin", {PLUGINS_DIR, "/dev/infiniband/"}, "ml.p5.48xlarge"),
    ("neuron-device-plugin", {PLUGINS_DIR, "/run"}, "ml.trn1.32xlarge"),
])
def test_device_plugins_mount_the_kubelet_socket_dir(unit: str, paths: set[str],
                                                       sample: str) -> None:
    (ds,) = kinds(render(unit), "DaemonSet").values()
    pod = pod_of(ds)
    assert paths <= set(host_mounts(pod).values())
    assert sample in affinity_types(pod) and "ml.m5.xlarge" not in affinity_types(pod)
    assert "nvidia.com/gpu.present" not in str(pod)


@pytest.mark.parametrize(("region", "image"), [
    ("us-west-2", "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/"),
    ("af-south-1", "877085696533.dkr.ecr.af-south-1.amazonaws.com/eks/"),
    ("cn-north-1", "918309763551.dkr.ecr.cn-north-1.amazonaws.com.cn/eks/"),
])
def test_efa_image_comes_from_the_regions_eks_registry(region: str, image: str) -> None:
    (ds,) = kinds(render("aws-efa-k8s-device-plugin", region), "DaemonSet").values()
    assert pod_of(ds)["containers"][0]["image"] == \
        image + "aws-efa-k8s-device-plugin:v0.5.20"


def test_version_bump_changes_only_the_annotation_and_image() -> None:
    old = manifests.for_unit("nvidia-device-plugin", "0.16.1", "us-west-2")[0]
    new = manifests.for_unit("nvidia-device-plugin", "0.17.0", "us-west-2")[0]
    assert old["metadata"]["name"] == new["metadata"]["name"]
    assert new["metadata"]["annotations"][manifests.VERSION_ANNOTATION] == "0.17.0"
    assert new["spec"]["template"]["spec"]["containers"][0]["image"].endswith("v0.17.0")


def test_s3_volume_binds_the_claim_to_the_bucket() -> None:
    pv, pvc = manifests.s3_volume("my-bucket", "us-west-2")
    assert pv["spec"]["csi"]["driver"] == "s3.csi.aws.com"
    assert pv["spec"]["csi"]["volumeAttributes"] == {"bucketName": "my-bucket"}
    assert pv["spec"]["claimRef"] == {"namespace": "default", "name": "s3-claim"}
    assert pvc["spec"]["volumeName"] == pv["metadata"]["name"]
    assert "region us-west-2" in pv["spec"]["mountOptions"]


def test_unknown_unit_is_refused() -> None:
    with pytest.raises(KeyError):
        manifests.for_unit("helm-chart", "1", "us-west-2")
