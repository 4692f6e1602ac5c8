"""The official kubernetes Python client against the emulator (TLS + EKS token)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from tests.sandbox_kube.conftest import CRDS, Sandbox


@pytest.fixture(scope="module")
def api(sandbox: Sandbox) -> Iterator[client.ApiClient]:
    cfg = client.Configuration()
    cfg.host = sandbox.api.endpoint
    ca = sandbox.state_dir / "kube-ca.crt"
    cfg.ssl_ca_cert = str(ca)
    cfg.api_key = {"authorization": "Bearer " + sandbox.api.token()}
    with client.ApiClient(cfg) as c:
        yield c


def test_version_endpoint(api: client.ApiClient) -> None:
    assert client.VersionApi(api).get_code().minor == "36"


def test_core_v1_crud_labels_patch_logs(sandbox: Sandbox, api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="py")))
    for name, team in (("a", "red"), ("b", "blue")):
        core.create_namespaced_config_map(
            "py",
            client.V1ConfigMap(
                metadata=client.V1ObjectMeta(name=name, labels={"team": team}), data={"k": name}
            ),
        )
    red = core.list_namespaced_config_map("py", label_selector="team in (red)")
    assert [c.metadata.name for c in red.items] == ["a"]
    patched = core.patch_namespaced_config_map("b", "py", {"data": {"extra": "1"}})
    assert patched.data == {"k": "b", "extra": "1"}
    stale = core.read_namespaced_config_map("a", "py")
    core.patch_namespaced_config_map("a", "py", {"data": {"k": "changed"}})
    stale.data = {"k": "lost-update"}
    with pytest.raises(ApiException) as err:
        core.replace_namespaced_config_map("a", "py", stale)
    assert err.value.status == 409

    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(generate_name="trainer-"),
        spec=client.V1PodSpec(
            restart_policy="Never",
            containers=[
                client.V1Container(
                    name="main", image="pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
                )
            ],
        ),
    )
    created = core.create_namespaced_pod("py", pod)
    assert created.metadata.name.startswith("trainer-") and len(created.metadata.name) == 13
    sandbox.advance(12)
    log = core.read_namespaced_pod_log(created.metadata.name, "py", tail_lines=1)
    assert log.startswith("[rank 0] step 20 | loss ")
    status = core.read_namespaced_pod(created.metadata.name, "py").status
    assert status.phase == "Running" and status.container_statuses[0].ready


def test_apps_v1_deployment_and_scale(sandbox: Sandbox, api: client.ApiClient) -> None:
    apps = client.AppsV1Api(api)
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "infer", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "infer"}},
            "template": {
                "metadata": {"labels": {"app": "infer"}},
                "spec": {
                    "containers": [
                        {
                            "name": "vllm",
                            "image": "vllm/vllm-openai:v0.9.0",
                            "resources": {"limits": {"nvidia.com/gpu": "4"}},
                        }
                    ]
                },
            },
        },
    }
    apps.create_namespaced_deployment("default", body)
    sandbox.advance(5)
    dep = apps.read_namespaced_deployment_status("infer", "default")
    assert dep.status.ready_replicas == 2 and dep.status.observed_generation == 1
    apps.patch_namespaced_deployment_scale("infer", "default", {"spec": {"replicas": 5}})
    sandbox.advance(5)
    dep = apps.read_namespaced_deployment("infer", "default")
    # 4 nodes x 8 GPUs = 32 GPUs; 5 x 4 GPUs fits, all become ready
    assert dep.status.ready_replicas == 5
    scale = apps.read_namespaced_deployment_scale("infer", "default")
    assert scale.spec.replicas == 5 and scale.status.selector == "app=infer"


def test_custom_objects_with_upstream_crd(sandbox: Sandbox, api: client.ApiClient) -> None:
    crd = yaml.safe_load((CRDS / "keda" / "keda.sh_scaledobjects.yaml").read_text())
    client.ApiextensionsV1Api(api).create_custom_resource_definition(crd)
    custom = client.CustomObjectsApi(api)
    so = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "infer", "labels": {"app": "infer"}},
        "spec": {
            "scaleTargetRef": {"name": "infer"},
            "triggers": [{"type": "prometheus", "metadata": {"query": "up"}}],
        },
    }
    custom.create_namespaced_custom_object("keda.sh", "v1alpha1", "default", "scaledobjects", so)
    listed = custom.list_namespaced_custom_object(
        "keda.sh", "v1alpha1", "default", "scaledobjects", label_selector="app=infer"
    )
    assert [i["metadata"]["name"] for i in listed["items"]] == ["infer"]
    custom.patch_namespaced_custom_object(
        "keda.sh", "v1alpha1", "default", "scaledobjects", "infer", {"spec": {"maxReplicaCount": 8}}
    )
    custom.patch_namespaced_custom_object_status(
        "keda.sh",
        "v1alpha1",
        "default",
        "scaledobjects",
        "infer",
        {"status": {"conditions": [{"type": "Ready", "status": "True"}]}},
    )
    got = custom.get_namespaced_custom_object(
        "keda.sh", "v1alpha1", "default", "scaledobjects", "infer"
    )
    assert got["spec"]["maxReplicaCount"] == 8
    assert got["status"]["conditions"][0]["type"] == "Ready"
    bad = {**so, "metadata": {"name": "bad"}, "spec": {"triggers": []}}
    with pytest.raises(ApiException) as err:
        custom.create_namespaced_custom_object(
            "keda.sh", "v1alpha1", "default", "scaledobjects", bad
        )
    assert err.value.status == 422 and "spec.scaleTargetRef: Required value" in err.value.body
    custom.delete_namespaced_custom_object(
        "keda.sh", "v1alpha1", "default", "scaledobjects", "infer"
    )


def test_watch_replays_from_resource_version(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="pywatch")))
    rv = core.list_namespaced_config_map("pywatch").metadata.resource_version
    for name in ("one", "two"):
        core.create_namespaced_config_map(
            "pywatch", client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name))
        )
    core.delete_namespaced_config_map("one", "pywatch")
    seen = []
    w = watch.Watch()
    for event in w.stream(
        core.list_namespaced_config_map, "pywatch", resource_version=rv, timeout_seconds=5
    ):
        seen.append((event["type"], event["object"].metadata.name))
        if len(seen) == 3:
            w.stop()
    assert seen == [("ADDED", "one"), ("ADDED", "two"), ("DELETED", "one")]


def test_unauthenticated_requests_are_rejected(sandbox: Sandbox) -> None:
    cfg = client.Configuration()
    cfg.host = sandbox.api.endpoint
    cfg.ssl_ca_cert = str(sandbox.state_dir / "kube-ca.crt")
    cfg.api_key = {"authorization": "Bearer k8s-aws-v1.bm90LWEtdXJs"}
    with client.ApiClient(cfg) as c, pytest.raises(ApiException) as err:
        client.CoreV1Api(c).list_namespace()
    assert err.value.status == 401


def test_secret_string_data_is_written_into_data(api: client.ApiClient) -> None:
    """stringData is write-only: merged into data as base64 and never read back (Kubernetes
    API reference, Secret v1); a pod's secretKeyRef then finds the key."""
    core = client.CoreV1Api(api)
    core.create_namespaced_secret("default", client.V1Secret(
        metadata=client.V1ObjectMeta(name="sd"), data={"a": "eA=="},
        string_data={"token": "t0k", "a": "y"}))
    read = core.read_namespaced_secret("sd", "default")
    assert read.data == {"a": "eQ==", "token": "dDBr"} and read.string_data is None
