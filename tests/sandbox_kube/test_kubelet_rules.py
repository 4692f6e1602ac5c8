"""Nodes like kubelet: each rule asserts what Kubernetes itself would show (node capacity and
labels, container state reasons, events, API errors). Sources: docs/sandbox.md, "Nodes and
kubelet"."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.sandbox_kube.agents import (
    AGENT_IMAGE,
    DS,
    EFA_IMAGE,
    NVIDIA_IMAGE,
    PLUGINS_DIR,
    daemonset,
    install_device_plugins,
    install_health_agent,
)
from tests.sandbox_kube.conftest import FakeNodeSource, Sandbox

PODS = "/api/v1/namespaces/default/pods"
GPU, EFA = "nvidia.com/gpu", "vpc.amazonaws.com/efa"


def _client(box: Sandbox) -> httpx.Client:
    ca = ssl.create_default_context(cafile=str(box.state_dir / "kube-ca.crt"))
    return httpx.Client(
        base_url=box.api.endpoint,
        verify=ca,
        timeout=30,
        headers={"Authorization": "Bearer " + box.api.token()},
    )


@pytest.fixture()
def box(tmp_path: Path) -> Iterator[Sandbox]:
    sandbox = Sandbox(tmp_path, FakeNodeSource(count=2))
    yield sandbox
    sandbox.stop()


@pytest.fixture()
def client(box: Sandbox) -> Iterator[httpx.Client]:
    with _client(box) as c:
        yield c


def nodes(client: httpx.Client) -> list[dict[str, Any]]:
    return list(client.get("/api/v1/nodes").json()["items"])


def pod(client: httpx.Client, name: str) -> dict[str, Any]:
    return dict(client.get(f"{PODS}/{name}").json())


def events(client: httpx.Client, name: str) -> list[tuple[str, str]]:
    items = client.get("/api/v1/namespaces/default/events").json()["items"]
    return [(e["reason"], e["message"]) for e in items if e["involvedObject"]["name"] == name]


def waiting(p: dict[str, Any]) -> dict[str, Any]:
    return dict(p["status"]["containerStatuses"][0]["state"].get("waiting") or {})


def simple_pod(name: str, image: str = "busybox:1.36", **spec: Any) -> dict[str, Any]:
    containers = [{"name": "c", "image": image, **spec.pop("container", {})}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": containers, **spec},
    }


def test_nodes_have_hyperpods_identity_and_no_gfd_label(box: Sandbox, client: httpx.Client) -> None:
    for node in nodes(client):
        instance = node["metadata"]["name"].removeprefix("hyperpod-")
        assert instance.startswith("i-")
        provider = node["spec"]["providerID"]
        assert provider.startswith("aws:///us-west-2a/sagemaker/cluster/hyperpod-")
        assert provider.endswith(f"-{instance}")
        assert "nvidia.com/gpu.present" not in node["metadata"]["labels"]


def test_gpus_and_efa_appear_only_while_their_plugins_run(
    box: Sandbox, client: httpx.Client
) -> None:
    assert all(GPU not in n["status"]["capacity"] for n in nodes(client))
    install_device_plugins(client)
    box.advance(3)
    for node in nodes(client):
        assert node["status"]["capacity"][GPU] == node["status"]["allocatable"][GPU] == "8"
        assert node["status"]["allocatable"][EFA] == "32"
    client.delete(DS.format(ns="kube-system") + "/nvidia").raise_for_status()
    box.advance(6)
    assert all(GPU not in n["status"]["capacity"] for n in nodes(client))
    assert all(EFA in n["status"]["capacity"] for n in nodes(client))


def test_a_plugin_without_the_kubelet_socket_dir_registers_nothing(
    box: Sandbox, client: httpx.Client
) -> None:
    for body in (
        daemonset("nvidia-nomount", NVIDIA_IMAGE, []),
        daemonset("efa-no-ib", EFA_IMAGE, [PLUGINS_DIR]),
    ):  # EFA needs /dev/infiniband
        client.post(DS.format(ns="kube-system"), json=body).raise_for_status()
    box.advance(3)
    running = [
        p
        for p in client.get("/api/v1/namespaces/kube-system/pods").json()["items"]
        if p["status"]["phase"] == "Running"
    ]
    assert len(running) == 4  # the plugins run, yet cannot register
    for node in nodes(client):
        assert GPU not in node["status"]["capacity"] and EFA not in node["status"]["capacity"]


def test_a_gpu_pod_is_unschedulable_until_the_plugin_runs(
    box: Sandbox, client: httpx.Client
) -> None:
    body = simple_pod("trainer", container={"resources": {"limits": {GPU: "1"}}})
    client.post(PODS, json=body).raise_for_status()
    box.advance(3)
    cond = pod(client, "trainer")["status"]["conditions"][0]
    assert cond["reason"] == "Unschedulable"
    assert cond["message"] == "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
    install_device_plugins(client)
    box.advance(6)
    assert pod(client, "trainer")["status"]["phase"] == "Running"


def test_neuron_plugin_advertises_devices_and_cores(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, FakeNodeSource(count=1, instance_type="ml.trn1.32xlarge"))
    try:
        with _client(box) as client:
            install_device_plugins(client)
            box.advance(3)
            (node,) = nodes(client)
        cap = node["status"]["capacity"]
        assert cap["aws.amazon.com/neuron"] == cap["aws.amazon.com/neurondevice"] == "16"
        assert cap["aws.amazon.com/neuroncore"] == "32" and GPU not in cap
    finally:
        box.stop()


def test_unknown_image_goes_err_image_pull_then_back_off(
    box: Sandbox, client: httpx.Client
) -> None:
    client.post(PODS, json=simple_pod("bad", "pytorch/pytorch:2.5")).raise_for_status()
    box.advance(0.5)
    first = waiting(pod(client, "bad"))
    assert first["reason"] == "ErrImagePull"
    assert "docker.io/pytorch/pytorch:2.5: not found" in first["message"]
    box.advance(2)
    later = pod(client, "bad")
    assert waiting(later) == {
        "reason": "ImagePullBackOff",
        "message": 'Back-off pulling image "pytorch/pytorch:2.5"',
    }
    assert later["status"]["phase"] == "Pending"
    seen = events(client, "bad")
    assert ("Failed", "Error: ErrImagePull") in seen
    assert ("BackOff", 'Back-off pulling image "pytorch/pytorch:2.5"') in seen
    assert any(
        r == "Failed" and m.startswith('Failed to pull image "pytorch/pytorch:2.5"')
        for r, m in seen
    )


def test_private_ecr_image_of_another_account_is_forbidden(
    box: Sandbox, client: httpx.Client
) -> None:
    wrong = AGENT_IMAGE.replace("905418368575", "111122223333")
    client.post(PODS, json=simple_pod("hma", wrong)).raise_for_status()
    client.post(PODS, json=simple_pod("ok", AGENT_IMAGE)).raise_for_status()
    box.advance(3)
    assert waiting(pod(client, "hma"))["reason"] == "ImagePullBackOff"
    assert any(r == "Failed" and m.endswith(": 403 Forbidden") for r, m in events(client, "hma"))
    assert pod(client, "ok")["status"]["phase"] == "Running"


def test_missing_service_account_is_refused_at_admission(
    box: Sandbox, client: httpx.Client
) -> None:
    r = client.post(PODS, json=simple_pod("sa", serviceAccountName="ghost"))
    assert r.status_code == 403
    assert r.json()["message"] == (
        'pods "sa" is forbidden: error looking up service account '
        'default/ghost: serviceaccount "ghost" not found'
    )
    body = daemonset("agent", "busybox:1.36", [], ns="default", serviceAccountName="ghost")
    client.post(DS.format(ns="default"), json=body).raise_for_status()
    box.advance(2)
    assert any(
        r == "FailedCreate" and 'serviceaccount "ghost" not found' in m
        for r, m in events(client, "agent")
    )
    assert client.get(PODS).json()["items"] == []


def test_missing_configmap_volume_blocks_the_pod_until_it_exists(
    box: Sandbox, client: httpx.Client
) -> None:
    body = simple_pod("cfg", volumes=[{"name": "conf", "configMap": {"name": "settings"}}])
    client.post(PODS, json=body).raise_for_status()
    box.advance(3)
    assert waiting(pod(client, "cfg")) == {"reason": "ContainerCreating"}
    assert (
        "FailedMount",
        'MountVolume.SetUp failed for volume "conf" : configmap "settings" not found',
    ) in events(client, "cfg")
    client.post(
        "/api/v1/namespaces/default/configmaps",
        json={"metadata": {"name": "settings"}, "data": {"a": "1"}},
    ).raise_for_status()
    box.advance(15)
    assert pod(client, "cfg")["status"]["phase"] == "Running"


def test_a_program_the_image_lacks_is_start_error_then_crash_loop(
    box: Sandbox, client: httpx.Client
) -> None:
    """containerd on EKS: runc cannot exec it, last state StartError 128 with the runtime's
    message, a Failed event, CrashLoopBackOff; under `sh -c` the shell's 127 and its line."""
    image = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
    client.post(PODS, json=simple_pod("direct", image, container={
        "command": ["hyperpodrun", "t.py"]})).raise_for_status()
    client.post(PODS, json=simple_pod("shell", image, restartPolicy="Never", container={
        "command": ["sh", "-c", "exec hyperpodrun t.py"]})).raise_for_status()
    box.advance(5)
    status = pod(client, "direct")["status"]["containerStatuses"][0]
    last = status["lastState"]["terminated"]
    assert (last["reason"], last["exitCode"]) == ("StartError", 128)
    assert last["message"].endswith(
        'exec: "hyperpodrun": executable file not found in $PATH: unknown')
    assert status["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert ("Failed", "Error: " + last["message"]) in events(client, "direct")
    assert not [e for e in events(client, "direct") if e[0] == "Started"]
    shell = pod(client, "shell")
    assert shell["status"]["phase"] == "Failed"
    ended = shell["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (ended["reason"], ended["exitCode"]) == ("Error", 127)
    assert client.get(f"{PODS}/shell/log").text == "sh: 1: exec: hyperpodrun: not found\n"


def test_missing_secret_in_a_projected_volume_fails_the_mount(
    box: Sandbox, client: httpx.Client
) -> None:
    sources = [{"secret": {"name": "tls"}}]
    body = simple_pod("proj", volumes=[{"name": "certs", "projected": {"sources": sources}}])
    client.post(PODS, json=body).raise_for_status()
    box.advance(3)
    assert (
        "FailedMount",
        'MountVolume.SetUp failed for volume "certs" : secret "tls" not found',
    ) in events(client, "proj")


def test_missing_secret_env_is_create_container_config_error(
    box: Sandbox, client: httpx.Client
) -> None:
    env = [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}}]
    client.post(PODS, json=simple_pod("env", container={"env": env})).raise_for_status()
    box.advance(3)
    assert waiting(pod(client, "env")) == {
        "reason": "CreateContainerConfigError",
        "message": 'secret "hf" not found',
    }
    assert ("Failed", 'Error: secret "hf" not found') in events(client, "env")


def _fault(box: Sandbox) -> dict[str, Any]:
    box.nodes.set(0, health="UnschedulablePendingReboot", fault_reason="NvidiaErrorReboot:Xid71")
    box.advance(6)
    with _client(box) as client:
        return dict(client.get(f"/api/v1/nodes/hyperpod-{box.nodes.nodes[0].instance_id}").json())


def _reported(node: dict[str, Any]) -> tuple[bool, bool]:
    labels = "sagemaker.amazonaws.com/fault-type" in node["metadata"]["labels"]
    conditions = any(c["type"] == "NvidiaErrorReboot" for c in node["status"]["conditions"])
    return labels, conditions


def test_fault_is_reported_only_by_a_running_health_agent(
    box: Sandbox, client: httpx.Client
) -> None:
    node = _fault(box)
    assert (
        node["metadata"]["labels"]["sagemaker.amazonaws.com/node-health-status"]
        == "UnschedulablePendingReboot"
    )  # HyperPod's own label
    assert _reported(node) == (False, False)
    install_health_agent(client)
    box.advance(6)
    assert _reported(_fault(box)) == (True, True)


def test_agent_without_host_paths_or_exporter_reports_less(
    box: Sandbox, client: httpx.Client
) -> None:
    client.post("/api/v1/namespaces", json={"metadata": {"name": "aws-hyperpod"}})
    blind = daemonset("hma-blind", AGENT_IMAGE, ["/etc/localtime"], ns="aws-hyperpod")
    client.post(DS.format(ns="aws-hyperpod"), json=blind).raise_for_status()
    box.advance(3)
    assert _reported(_fault(box)) == (False, False)
    client.delete(DS.format(ns="aws-hyperpod") + "/hma-blind")
    install_health_agent(client, args=["--enable-k8s-exporter=false"])
    box.advance(6)
    assert _reported(_fault(box)) == (True, False)


def test_the_network_view_is_asked_at_every_pull_attempt(box: Sandbox,
                                                         client: httpx.Client) -> None:
    """The AWS side answers whether the node reaches the registry (contracts.NetworkView's
    `pull_blocked`); a route that comes back lets the next attempt succeed."""
    blocked = {"on": True}
    asked: list[tuple[str, str]] = []

    def pull_blocked(node: dict[str, Any], image: str) -> str | None:
        asked.append((node["metadata"]["name"], image))
        return "dial tcp: i/o timeout" if blocked["on"] else None

    box.nodes.pull_blocked = pull_blocked  # type: ignore[attr-defined]
    client.post(PODS, json=simple_pod("gated")).raise_for_status()
    box.advance(3)
    assert waiting(pod(client, "gated"))["reason"] == "ImagePullBackOff"
    assert asked and asked[0][0] == pod(client, "gated")["spec"]["nodeName"]
    blocked["on"] = False
    box.advance(30)
    assert pod(client, "gated")["status"]["phase"] == "Running"
