"""Controllers on the stepped virtual clock: HyperPod nodes, scheduling, DaemonSets, PVCs,
and persistence across an emulator restart."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.sandbox_kube.agents import install_device_plugins, install_health_agent
from tests.sandbox_kube.conftest import FakeNodeSource, Sandbox

HEALTH = "sagemaker.amazonaws.com/node-health-status"


@pytest.fixture()
def box(tmp_path: Path) -> Iterator[Sandbox]:
    sandbox = Sandbox(tmp_path, FakeNodeSource())
    yield sandbox
    sandbox.stop()


@pytest.fixture()
def client(box: Sandbox) -> Iterator[httpx.Client]:
    import ssl

    ca = ssl.create_default_context(cafile=str(box.state_dir / "kube-ca.crt"))
    with httpx.Client(
        base_url=box.api.endpoint,
        verify=ca,
        timeout=30,
        headers={"Authorization": "Bearer " + box.api.token()},
    ) as c:
        install_device_plugins(c)  # GPUs and EFA exist only once their plugins run
        install_health_agent(c)
        box.advance(3)
        yield c


def _pod(name: str, gpus: int = 0, **spec: Any) -> dict[str, Any]:
    limits = {"nvidia.com/gpu": str(gpus)} if gpus else {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [{"name": "c", "image": "busybox:1.36", "resources": {"limits": limits}}],
            **spec,
        },
    }


PODS = "/api/v1/namespaces/default/pods"


def test_hyperpod_group_becomes_ready_gpu_nodes(box: Sandbox, client: httpx.Client) -> None:
    nodes = client.get("/api/v1/nodes").json()["items"]
    assert len(nodes) == 4
    for node in nodes:
        alloc = node["status"]["allocatable"]
        assert alloc["nvidia.com/gpu"] == "8" and alloc["vpc.amazonaws.com/efa"] == "32"
        labels = node["metadata"]["labels"]
        assert labels["node.kubernetes.io/instance-type"] == "ml.p5.48xlarge"
        assert labels["sagemaker.amazonaws.com/compute-type"] == "hyperpod"
        assert labels["sagemaker.amazonaws.com/instance-group-name"] == "gpu-workers"
        assert labels[HEALTH] == "Schedulable"
        ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
        assert ready["status"] == "True"
        assert node["metadata"]["name"].startswith("hyperpod-i-")


def test_health_fault_taints_node_and_recovery_clears_it(
    box: Sandbox, client: httpx.Client
) -> None:
    box.nodes.set(1, health="UnschedulablePendingReboot", fault_reason="NvidiaErrorReboot:Xid71")
    box.advance(5)
    name = f"hyperpod-{box.nodes.nodes[1].instance_id}"
    node = client.get(f"/api/v1/nodes/{name}").json()
    assert node["metadata"]["labels"][HEALTH] == "UnschedulablePendingReboot"
    assert node["metadata"]["labels"]["sagemaker.amazonaws.com/fault-type"] == "NvidiaErrorReboot"
    assert {"key": HEALTH, "value": "Unschedulable", "effect": "NoSchedule"} in node["spec"][
        "taints"
    ]
    assert any(
        c["type"] == "NvidiaErrorReboot" and c["status"] == "True"
        for c in node["status"]["conditions"]
    )
    box.nodes.set(1, health="Schedulable", fault_reason=None)
    box.advance(5)
    node = client.get(f"/api/v1/nodes/{name}").json()
    assert node["spec"]["taints"] == []
    assert "sagemaker.amazonaws.com/fault-type" not in node["metadata"]["labels"]
    box.nodes.nodes.pop(3)  # instance replaced / removed on the AWS side
    box.advance(5)
    assert len(client.get("/api/v1/nodes").json()["items"]) == 3


def test_scheduler_respects_gpus_selectors_and_taints(box: Sandbox, client: httpx.Client) -> None:
    for i in range(4):
        client.post(PODS, json=_pod(f"full-{i}", gpus=8)).raise_for_status()
    client.post(PODS, json=_pod("extra", gpus=1)).raise_for_status()
    client.post(PODS, json=_pod("picky", nodeSelector={"gpu": "h200"})).raise_for_status()
    box.advance(3)
    pods = {p["metadata"]["name"]: p for p in client.get(PODS).json()["items"]}
    assert {pods[f"full-{i}"]["spec"]["nodeName"] for i in range(4)} == {
        n["metadata"]["name"] for n in client.get("/api/v1/nodes").json()["items"]
    }
    assert all(pods[f"full-{i}"]["status"]["phase"] == "Running" for i in range(4))
    extra = next(c for c in pods["extra"]["status"]["conditions"] if c["type"] == "PodScheduled")
    assert pods["extra"]["status"]["phase"] == "Pending"
    assert extra["reason"] == "Unschedulable"
    assert extra["message"] == "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."
    assert (
        "didn't match Pod's node affinity/selector"
        in next(c for c in pods["picky"]["status"]["conditions"] if c["type"] == "PodScheduled")[
            "message"
        ]
    )

    client.delete(f"{PODS}/full-0").raise_for_status()
    box.advance(3)
    extra = client.get(f"{PODS}/extra").json()
    assert extra["spec"].get("nodeName") and extra["status"]["phase"] == "Running"

    box.nodes.set(0, health="Unschedulable")
    box.nodes.set(1, health="Unschedulable")
    box.nodes.set(2, health="Unschedulable")
    box.nodes.set(3, health="Unschedulable")
    box.advance(5)
    client.post(PODS, json=_pod("intolerant")).raise_for_status()
    tolerant = _pod(
        "tolerant",
        tolerations=[
            {"key": HEALTH, "operator": "Equal", "value": "Unschedulable", "effect": "NoSchedule"}
        ],
    )
    client.post(PODS, json=tolerant).raise_for_status()
    box.advance(3)
    assert client.get(f"{PODS}/intolerant").json()["status"]["phase"] == "Pending"
    assert client.get(f"{PODS}/tolerant").json()["status"]["phase"] == "Running"


def test_daemonset_runs_on_matching_nodes(box: Sandbox, client: httpx.Client) -> None:
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "hma"},
        "spec": {
            "selector": {"matchLabels": {"app": "hma"}},
            "template": {
                "metadata": {"labels": {"app": "hma"}},
                "spec": {
                    "nodeSelector": {"node.kubernetes.io/instance-type": "ml.p5.48xlarge"},
                    "containers": [{"name": "agent", "image": "busybox:1.36"}],
                },
            },
        },
    }
    client.post("/apis/apps/v1/namespaces/default/daemonsets", json=ds).raise_for_status()
    box.advance(3)
    got = client.get("/apis/apps/v1/namespaces/default/daemonsets/hma").json()["status"]
    assert got["desiredNumberScheduled"] == 4 and got["numberReady"] == 4
    pods = client.get(PODS, params={"labelSelector": "app=hma"}).json()["items"]
    assert len({p["spec"]["nodeName"] for p in pods}) == 4


EBS = "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/aws-ebs-csi-driver:v1.45.0-eksbuild.2"


def test_pvc_binds_to_matching_pv_or_provisions(box: Sandbox, client: httpx.Client) -> None:
    pv = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "fsx-1"},
        "spec": {
            "capacity": {"storage": "1200Gi"},
            "accessModes": ["ReadWriteMany"],
            "storageClassName": "fsx",
            "csi": {"driver": "fsx.csi.aws.com", "volumeHandle": "fs-1"},
        },
    }
    client.post("/api/v1/persistentvolumes", json=pv).raise_for_status()
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data"},
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "storageClassName": "fsx",
            "resources": {"requests": {"storage": "1Ti"}},
        },
    }
    client.post("/api/v1/namespaces/default/persistentvolumeclaims", json=claim)
    sc = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "gp3"},
        "provisioner": "ebs.csi.aws.com",
    }
    client.post("/apis/storage.k8s.io/v1/storageclasses", json=sc).raise_for_status()
    claim2 = {
        **claim,
        "metadata": {"name": "scratch"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "gp3",
            "resources": {"requests": {"storage": "100Gi"}},
        },
    }
    client.post("/api/v1/namespaces/default/persistentvolumeclaims", json=claim2)
    box.settle()
    data = client.get("/api/v1/namespaces/default/persistentvolumeclaims/data").json()
    assert data["status"]["phase"] == "Bound" and data["spec"]["volumeName"] == "fsx-1"
    scratch = client.get("/api/v1/namespaces/default/persistentvolumeclaims/scratch").json()
    assert scratch["status"]["phase"] == "Pending"  # no EBS CSI controller runs yet
    events = client.get("/api/v1/namespaces/default/events").json()["items"]
    assert any(e["reason"] == "ExternalProvisioning" and "'ebs.csi.aws.com'" in e["message"]
               and e["involvedObject"]["name"] == "scratch" for e in events)
    client.post("/apis/apps/v1/namespaces/kube-system/deployments", json={
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "ebs-csi-controller", "namespace": "kube-system"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "ebs-csi-controller"}},
                 "template": {"metadata": {"labels": {"app": "ebs-csi-controller"}},
                              "spec": {"containers": [{"name": "ebs-plugin", "image": EBS}]}}},
    }).raise_for_status()
    box.advance(30)
    scratch = client.get("/api/v1/namespaces/default/persistentvolumeclaims/scratch").json()
    assert scratch["status"]["phase"] == "Bound"
    assert scratch["status"]["capacity"] == {"storage": "100Gi"}
    assert client.get("/api/v1/persistentvolumes/fsx-1").json()["status"]["phase"] == "Bound"


def test_objects_survive_restart_and_old_watches_expire(box: Sandbox, client: httpx.Client) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "keep"}, "data": {"a": "1"}}
    created = client.post("/api/v1/namespaces/default/configmaps", json=cm).json()
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Cluster",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }
    client.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd)
    client.post(
        "/apis/example.com/v1/things",
        json={
            "apiVersion": "example.com/v1",
            "kind": "Thing",
            "metadata": {"name": "t"},
            "spec": {"anything": [1, 2]},
        },
    ).raise_for_status()
    old_rv = created["metadata"]["resourceVersion"]
    box.stop()
    again = Sandbox(box.state_dir, box.nodes)
    try:
        assert again.api.ca_pem == box.api.ca_pem  # the CA is made once and reused
        assert (box.state_dir / "kube-ca.crt").read_bytes() == again.api.ca_pem
        assert again.api.endpoint.startswith("https://127.0.0.1:")
        import ssl

        ca = ssl.create_default_context(cafile=str(box.state_dir / "kube-ca.crt"))
        with httpx.Client(
            base_url=again.api.endpoint,
            verify=ca,
            timeout=30,
            headers={"Authorization": "Bearer " + again.api.token()},
        ) as c2:
            kept = c2.get("/api/v1/namespaces/default/configmaps/keep").json()
            assert kept["metadata"]["uid"] == created["metadata"]["uid"]
            thing = c2.get("/apis/example.com/v1/things/t").json()
            assert thing["spec"] == {"anything": [1, 2]}
            with c2.stream(
                "GET",
                "/api/v1/namespaces/default/configmaps",
                params={"watch": "1", "resourceVersion": old_rv},
            ) as resp:
                import json

                event = json.loads(next(resp.iter_lines()))
            assert event["type"] == "ERROR" and event["object"]["reason"] == "Expired"
    finally:
        again.stop()


def test_statefulset_pods_and_claims(box: Sandbox, client: httpx.Client) -> None:
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "ray"},
        "spec": {
            "replicas": 2,
            "serviceName": "ray",
            "selector": {"matchLabels": {"a": "r"}},
            "template": {
                "metadata": {"labels": {"a": "r"}},
                "spec": {"containers": [{"name": "c", "image": "rayproject/ray"}]},
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}},
                    },
                }
            ],
        },
    }
    client.post("/apis/apps/v1/namespaces/default/statefulsets", json=sts).raise_for_status()
    box.advance(3)
    names = sorted(p["metadata"]["name"] for p in client.get(PODS).json()["items"])
    assert names == ["ray-0", "ray-1"]
    claims = client.get("/api/v1/namespaces/default/persistentvolumeclaims").json()["items"]
    assert sorted(c["metadata"]["name"] for c in claims) == ["data-ray-0", "data-ray-1"]
    status = client.get("/apis/apps/v1/namespaces/default/statefulsets/ray").json()["status"]
    assert status["readyReplicas"] == 2
    client.patch(
        "/apis/apps/v1/namespaces/default/statefulsets/ray/scale",
        json={"spec": {"replicas": 1}},
        headers={"Content-Type": "application/merge-patch+json"},
    ).raise_for_status()
    box.settle()
    assert [p["metadata"]["name"] for p in client.get(PODS).json()["items"]] == ["ray-0"]


def test_cordon_and_drain_move_pods(box: Sandbox, client: httpx.Client) -> None:
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"a": "d"}},
            "template": {
                "metadata": {"labels": {"a": "d"}},
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "image": "busybox:1.36",
                            "resources": {"limits": {"nvidia.com/gpu": "8"}},
                        }
                    ]
                },
            },
        },
    }
    client.post("/apis/apps/v1/namespaces/default/deployments", json=dep).raise_for_status()
    box.advance(3)
    before = {p["spec"]["nodeName"] for p in client.get(PODS).json()["items"]}
    victim = sorted(before)[0]
    box.kubectl("drain", victim, "--ignore-daemonsets", "--timeout=30s")
    box.advance(3)
    pods = client.get(PODS).json()["items"]
    assert len(pods) == 2 and victim not in {p["spec"]["nodeName"] for p in pods}
    assert client.get(f"/api/v1/nodes/{victim}").json()["spec"]["unschedulable"] is True
    box.kubectl("uncordon", victim)
    assert not client.get(f"/api/v1/nodes/{victim}").json()["spec"].get("unschedulable")


def test_crashing_container_backs_off_and_keeps_previous_logs(
    box: Sandbox, client: httpx.Client
) -> None:
    pod = _pod("crashy")
    pod["metadata"]["annotations"] = {
        "sandbox.podplane.io/duration-seconds": "20",
        "sandbox.podplane.io/exit-code": "1",
        "sandbox.podplane.io/log-kind": "training",
    }
    client.post(PODS, json=pod).raise_for_status()
    box.advance(23)  # 2s start + 20s run, then it exits
    cs = client.get(f"{PODS}/crashy").json()["status"]["containerStatuses"][0]
    assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert cs["restartCount"] == 1 and cs["lastState"]["terminated"]["exitCode"] == 1
    row = box.kubectl("get", "pod", "crashy", "--no-headers").stdout.split()
    assert row[2:4] == ["CrashLoopBackOff", "1"]
    box.advance(10)  # first back-off is 10s
    cs = client.get(f"{PODS}/crashy").json()["status"]["containerStatuses"][0]
    assert "running" in cs["state"] and cs["ready"] is True
    previous = client.get(f"{PODS}/crashy/log", params={"previous": "true"}).text.splitlines()
    assert previous[-1].startswith("[rank 0] step 40 |")  # 20s of a 5s-step loop
    current = client.get(f"{PODS}/crashy/log").text.splitlines()
    assert not any("| loss" in line for line in current)  # the new run just started
    box.advance(21)
    cs = client.get(f"{PODS}/crashy").json()["status"]["containerStatuses"][0]
    assert cs["restartCount"] == 2 and "back-off 20s" in cs["state"]["waiting"]["message"]
