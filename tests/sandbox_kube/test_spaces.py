"""SageMaker Spaces in the sandbox: the `amazon-sagemaker-spaces` EKS add-on (boto3 against the
sandbox's EKS API) installs jupyter-k8s's CRDs and operator; a Workspace (the official
`kubernetes` client) becomes what the operator makes of it, and its fake Jupyter server answers
through the API server's service proxy. One module world: a copy of the run's created cluster
(tests/golden.py), where podplane's create installed cert-manager, the Pod Identity agent and
Mountpoint for S3."""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import InvalidStatus

from podplane_sandbox.aws.eks.addons import ADDON_SECONDS
from podplane_sandbox.aws.iam_rules import LAG_SECONDS
from podplane_sandbox.clock import VirtualClock
from podplane_sandbox.kube.resources import Registry
from podplane_sandbox.kube.store import Store
from tests.clusters.helpers import BODY
from tests.golden import created_stack
from tests.jobs.conftest import settle, store
from tests.sandbox_aws.iam_setup import make_role
from tests.spaces.kernels import replies_to
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
CLUSTER = BODY["name"]
SPACES = "amazon-sagemaker-spaces"
GROUP, VERSION = "workspace.jupyter.org", "v1alpha1"
TOKEN = "s3cret-token"
FINALIZER = "workspace.jupyter.org/workspace-protection"
WORKSPACES = "workspace.jupyter.org/workspaces"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Stack]:
    async with created_stack(tmp_path_factory, "spaces") as stack:
        yield stack


def api(stack: Stack) -> k8s.ApiClient:
    return k8s_config.new_client_from_config(config_file=str(stack.sandbox.kubeconfig(CLUSTER)),
                                             context=CLUSTER)


def addon(stack: Stack, name: str) -> dict[str, Any]:
    return dict(stack.aws("eks").describe_addon(clusterName=CLUSTER, addonName=name)["addon"])


def install_spaces(stack: Stack) -> None:
    """The EBS CSI driver and the spaces add-on, the controller's role associated first."""
    eks = stack.aws("eks")
    names = set(eks.list_addons(clusterName=CLUSTER)["addons"])
    if SPACES in names:
        return
    role = make_role(stack.aws, "spaces-controller", ("pods.eks.amazonaws.com",))
    stack.advance(LAG_SECONDS)
    eks.create_pod_identity_association(clusterName=CLUSTER, namespace="jupyter-k8s-system",
                                        serviceAccount="jupyter-k8s-controller-manager",
                                        roleArn=role)
    eks.create_addon(clusterName=CLUSTER, addonName="aws-ebs-csi-driver")
    eks.create_addon(clusterName=CLUSTER, addonName=SPACES)
    settle(stack, ADDON_SECONDS + 30)
    settle(stack, 30)


def workspace(name: str, **spec: Any) -> dict[str, Any]:
    body = {"displayName": name, "image": "public.ecr.aws/sagemaker/sagemaker-distribution:"
            "latest-cpu", "storage": {"size": "10Gi",
                                      "storageClassName": "sagemaker-spaces-default-storage-class"},
            "env": [{"name": "JUPYTER_TOKEN", "value": TOKEN}],
            "containerConfig": {"args": [f"--ServerApp.base_url=/spaces/{name}/",
                                         "--ServerApp.root_dir=/"]}}
    body.update(spec)
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Workspace",
            "metadata": {"name": name, "namespace": "default"}, "spec": body}


def create(stack: Stack, ws: dict[str, Any]) -> dict[str, Any]:
    with api(stack) as c:
        return dict(k8s.CustomObjectsApi(c).create_namespaced_custom_object(
            GROUP, VERSION, "default", "workspaces", ws))


def get_ws(stack: Stack, name: str) -> dict[str, Any]:
    with api(stack) as c:
        return dict(k8s.CustomObjectsApi(c).get_namespaced_custom_object(
            GROUP, VERSION, "default", "workspaces", name))


def set_desired(stack: Stack, name: str, desired: str) -> None:
    with api(stack) as c:
        k8s.CustomObjectsApi(c).patch_namespaced_custom_object(
            GROUP, VERSION, "default", "workspaces", name, {"spec": {"desiredStatus": desired}})


def condition(ws: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(c for c in ws["status"]["conditions"] if c["type"] == kind)


def jupyter(stack: Stack, name: str, path: str, method: str = "GET", token: str | None = TOKEN,
            body: Any = None) -> httpx.Response:
    """A request to the space through the API server's service proxy."""
    with api(stack) as c:
        conf = c.configuration
        auth = conf.get_api_key_with_prefix("BearerToken") or \
            conf.get_api_key_with_prefix("authorization")
        headers = {"Authorization": auth}
        url = (f"{conf.host}/api/v1/namespaces/default/services/workspace-{name}-service:http"
               f"/proxy/spaces/{name}/{path}")
        params = {"token": token} if token else {}
        ca = ssl.create_default_context(cafile=conf.ssl_ca_cert)
        with httpx.Client(verify=ca, headers=headers, timeout=30) as h:
            return h.request(method, url, params=params,
                             content=json.dumps(body) if body is not None else None)


def running(stack: Stack, name: str) -> dict[str, Any]:
    for _ in range(12):
        settle(stack, 10)
        ws = get_ws(stack, name)
        if condition(ws, "Available")["status"] == "True":
            return ws
    raise AssertionError(f"{name} never became Available: {ws.get('status')}")


# -- the add-on ---------------------------------------------------------------------------------
async def test_the_addon_installs_crds_operator_and_needs_its_role(world: Stack) -> None:
    install_spaces(world)
    assert addon(world, SPACES)["status"] == "ACTIVE", addon(world, SPACES)
    with api(world) as c:
        crds = {i.metadata.name for i in
                k8s.ApiextensionsV1Api(c).list_custom_resource_definition().items}
        deps = k8s.AppsV1Api(c).list_namespaced_deployment("jupyter-k8s-system").items
    assert {"workspaces.workspace.jupyter.org", "workspacetemplates.workspace.jupyter.org",
            "workspaceaccessstrategies.workspace.jupyter.org"} <= crds
    assert [d.metadata.name for d in deps] == ["jupyter-k8s-controller-manager"]
    assert deps[0].status.ready_replicas == 1
    # the schema from the Go types: displayName is required, desiredStatus an enum
    bad = workspace("bad")
    del bad["spec"]["displayName"]
    bad["spec"]["desiredStatus"] = "Paused"
    with pytest.raises(k8s.ApiException) as refused:
        create(world, bad)
    assert refused.value.status == 422
    assert "spec.displayName" in refused.value.body and "Paused" in refused.value.body


async def test_without_the_pod_identity_association_the_addon_is_degraded(world: Stack) -> None:
    install_spaces(world)
    eks = world.aws("eks")
    assoc = next(a for a in eks.list_pod_identity_associations(clusterName=CLUSTER)
                 ["associations"] if a["namespace"] == "jupyter-k8s-system")
    eks.delete_pod_identity_association(clusterName=CLUSTER,
                                        associationId=assoc["associationId"])
    eks.update_addon(clusterName=CLUSTER, addonName=SPACES)
    settle(world, ADDON_SECONDS + 10)
    got = addon(world, SPACES)
    assert got["status"] == "DEGRADED"
    assert got["health"]["issues"][0]["code"] == "AddonPermissionFailure"
    eks.create_pod_identity_association(
        clusterName=CLUSTER, namespace="jupyter-k8s-system",
        serviceAccount="jupyter-k8s-controller-manager", roleArn=assoc["associationArn"] and
        world.aws("iam").get_role(RoleName="spaces-controller")["Role"]["Arn"])
    eks.update_addon(clusterName=CLUSTER, addonName=SPACES)
    settle(world, ADDON_SECONDS + 10)
    assert addon(world, SPACES)["status"] == "ACTIVE"


# -- the operator -------------------------------------------------------------------------------
def shared_bucket(stack: Stack) -> str:
    """The bucket podplane's create mounted through Mountpoint (the world's S3 PV)."""
    for pv in store(stack).items("persistentvolumes"):
        csi = pv["spec"].get("csi") or {}
        if csi.get("driver") == "s3.csi.aws.com":
            return str(csi["volumeAttributes"]["bucketName"])
    raise AssertionError("no Mountpoint PV in the created world")


def data_claim(stack: Stack, bucket: str) -> None:
    """A space-data style static PV/PVC: Mountpoint with `prefix data/`."""
    with api(stack) as c:
        core = k8s.CoreV1Api(c)
        core.create_persistent_volume({
            "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "space-data"},
            "spec": {"capacity": {"storage": "1200Gi"}, "accessModes": ["ReadWriteMany"],
                     "storageClassName": "", "mountOptions": ["allow-delete", "prefix data/"],
                     "claimRef": {"namespace": "default", "name": "space-data"},
                     "csi": {"driver": "s3.csi.aws.com", "volumeHandle": "space-data",
                             "volumeAttributes": {"bucketName": bucket}}}})
        core.create_namespaced_persistent_volume_claim("default", {
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "space-data"},
            "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "",
                     "volumeName": "space-data",
                     "resources": {"requests": {"storage": "1200Gi"}}}})


async def test_a_workspace_runs_with_upstream_names_and_its_creator(world: Stack) -> None:
    install_spaces(world)
    create(world, workspace("alice"))
    ws = running(world, "alice")
    assert FINALIZER in ws["metadata"]["finalizers"]
    creator = ws["metadata"]["annotations"]["workspace.jupyter.org/created-by"]
    assert creator
    with api(world) as c:  # set on create only: an update cannot change it
        k8s.CustomObjectsApi(c).patch_namespaced_custom_object(
            GROUP, VERSION, "default", "workspaces", "alice",
            {"metadata": {"annotations": {"workspace.jupyter.org/created-by": "mallory"}}})
    assert get_ws(world, "alice")["metadata"]["annotations"][
        "workspace.jupyter.org/created-by"] == creator
    assert ws["status"]["deploymentName"] == "workspace-alice"
    assert ws["status"]["serviceName"] == "workspace-alice-service"
    assert condition(ws, "Progressing")["reason"] == "ResourcesReady"
    labels = {"app": "jupyter", "workspace.jupyter.org/workspace-name": "alice",
              "workspace.jupyter.org/component": "workspace"}
    with api(world) as c:
        dep = k8s.AppsV1Api(c).read_namespaced_deployment("workspace-alice", "default")
        svc = k8s.CoreV1Api(c).read_namespaced_service("workspace-alice-service", "default")
        pvc = k8s.CoreV1Api(c).read_namespaced_persistent_volume_claim(
            "workspace-alice-pvc", "default")
        pods = k8s.CoreV1Api(c).list_namespaced_pod(
            "default", label_selector="workspace.jupyter.org/workspace-name=alice").items
    assert dep.metadata.labels == labels and svc.metadata.labels == labels
    assert svc.spec.ports[0].port == 8888 and svc.spec.ports[0].name == "http"
    assert pvc.status.phase == "Bound"
    assert [p.status.phase for p in pods] == ["Running"]
    assert pods[0].spec.containers[0].name == "workspace"
    assert dep.metadata.owner_references[0].kind == "Workspace"


async def test_the_token_is_required_and_base_url_honoured(world: Stack) -> None:
    install_spaces(world)
    if store(world).find("apps/deployments", "default", "workspace-alice") is None:
        create(world, workspace("alice"))
        running(world, "alice")
    assert jupyter(world, "alice", "api/status", token=None).status_code == 403
    assert jupyter(world, "alice", "api/status", token="wrong").status_code == 403
    status = jupyter(world, "alice", "api/status")
    assert status.status_code == 200 and status.json()["kernels"] == 0
    lab = jupyter(world, "alice", "lab")
    assert "<title>JupyterLab</title>" in lab.text and "alice" in lab.text


async def test_home_files_survive_stop_and_start_and_the_pvc_stays(world: Stack) -> None:
    install_spaces(world)
    create(world, workspace("bob"))
    running(world, "bob")
    put = jupyter(world, "bob", "api/contents/home/jovyan/notes.txt", "PUT",
                  body={"type": "file", "format": "text", "content": "hello"})
    assert put.status_code == 201, put.text
    set_desired(world, "bob", "Stopped")
    settle(world, 10)
    settle(world, 10)
    ws = get_ws(world, "bob")
    assert condition(ws, "Stopped") == {**condition(ws, "Stopped"), "status": "True",
                                        "reason": "AllResourcesStopped"}
    assert store(world).find("apps/deployments", "default", "workspace-bob") is None
    assert store(world).find("services", "default", "workspace-bob-service") is None
    assert store(world).find("persistentvolumeclaims", "default", "workspace-bob-pvc")
    assert not [p for p in store(world).items("pods", "default")
                if p["metadata"]["labels"].get("workspace.jupyter.org/workspace-name") == "bob"]
    set_desired(world, "bob", "Running")
    running(world, "bob")
    got = jupyter(world, "bob", "api/contents/home/jovyan/notes.txt")
    assert got.status_code == 200 and got.json()["content"] == "hello"
    listing = jupyter(world, "bob", "api/contents/home/jovyan").json()
    assert [e["name"] for e in listing["content"]] == ["notes.txt"]


async def test_home_files_are_in_the_saved_store(world: Stack, tmp_path: Path) -> None:
    """What a restored world loads (kube-store.json) has the files of each home claim."""
    install_spaces(world)
    if store(world).find(WORKSPACES, "default", "bob") is None:
        await test_home_files_survive_stop_and_start_and_the_pvc_stays(world)
    claim = store(world).find("persistentvolumeclaims", "default", "workspace-bob-pvc")
    saved = tmp_path / "kube-store.json"
    world.sandbox.call(_save(store(world), saved))
    again = Store(Registry(), VirtualClock(speed=0))
    again.load(saved, lambda crd: None)
    files = again.extras["volumes"][claim["metadata"]["uid"]]
    assert files["notes.txt"]["content"] == "hello"  # kept by the claim, relative to it


async def _save(kube_store: Any, path: Path) -> None:
    kube_store.save(path)  # on the API server's loop, as its flush does


async def test_a_bucket_prefix_is_listed_through_a_prefixed_mountpoint_pv(world: Stack) -> None:
    install_spaces(world)
    bucket = shared_bucket(world)
    world.aws("s3").put_object(Bucket=bucket, Key="data/train.jsonl", Body=b'{"x": 1}\n')
    world.aws("s3").put_object(Bucket=bucket, Key="models/skip.bin", Body=b"0")
    data_claim(world, bucket)
    create(world, workspace("carol", volumes=[{
        "name": "data", "persistentVolumeClaimName": "space-data", "mountPath": "/data"}]))
    running(world, "carol")
    root = jupyter(world, "carol", "api/contents/").json()
    assert {"data", "home"} <= {e["name"] for e in root["content"]}
    listing = jupyter(world, "carol", "api/contents/data")
    assert listing.status_code == 200, listing.text
    names = [e["name"] for e in listing.json()["content"]]
    assert "train.jsonl" in names and "skip.bin" not in names and "data" not in names
    got = jupyter(world, "carol", "api/contents/data/train.jsonl").json()
    assert got["content"] == '{"x": 1}\n'
    assert jupyter(world, "carol", "api/contents/nowhere").status_code == 404


async def test_an_idle_workspace_stops_after_its_timeout(world: Stack) -> None:
    install_spaces(world)
    idle = {"enabled": True, "idleTimeoutInMinutes": 30,
            "detection": {"httpGet": {"path": "/api/idle", "port": 8888}}}
    create(world, workspace("dave", idleShutdown=idle))
    running(world, "dave")
    for _ in range(4):  # 20 minutes with activity every 5: never idle
        assert jupyter(world, "dave", "api/status").status_code == 200
        settle(world, 300)
    assert get_ws(world, "dave")["spec"].get("desiredStatus", "Running") == "Running"
    for _ in range(8):  # then 40 quiet minutes, past the 30-minute timeout
        settle(world, 300)
    ws = get_ws(world, "dave")
    assert ws["spec"]["desiredStatus"] == "Stopped"
    assert condition(ws, "Stopped")["status"] == "True"
    reasons = {e["reason"] for e in store(world).items("events", "default")
               if e["involvedObject"]["name"] == "dave"}
    assert "IdleShutdown" in reasons


async def test_deleting_a_workspace_deletes_its_home_volume(world: Stack) -> None:
    install_spaces(world)
    create(world, workspace("erin"))
    running(world, "erin")
    with api(world) as c:
        k8s.CustomObjectsApi(c).delete_namespaced_custom_object(
            GROUP, VERSION, "default", "workspaces", "erin")
    settle(world, 10)
    settle(world, 30)
    assert store(world).find(WORKSPACES, "default", "erin") is None
    assert store(world).find("persistentvolumeclaims", "default", "workspace-erin-pvc") is None


async def test_workspace_connection_answers_a_web_ui_url(world: Stack) -> None:
    install_spaces(world)
    if store(world).find(WORKSPACES, "default", "alice") is None:
        create(world, workspace("alice"))
        running(world, "alice")
    with api(world) as c:
        objs = k8s.CustomObjectsApi(c)
        conn = {"metadata": {"namespace": "default"},
                "spec": {"workspaceName": "alice", "workspaceConnectionType": "web-ui"}}
        with pytest.raises(k8s.ApiException) as missing:  # alice names no access strategy
            objs.create_namespaced_custom_object(
                "connection.workspace.jupyter.org", "v1alpha1", "default",
                "workspaceconnections", conn)
        assert missing.value.status == 404
        objs.create_namespaced_custom_object(GROUP, VERSION, "default",
                                             "workspaceaccessstrategies", {
            "apiVersion": f"{GROUP}/{VERSION}", "kind": "WorkspaceAccessStrategy",
            "metadata": {"name": "web"},
            "spec": {"displayName": "web", "accessResourceTemplates": [],
                     "bearerAuthURLTemplate":
                         "https://spaces.example.com/{{ .Workspace.Namespace }}/"
                         "{{ .Workspace.Name }}/bearer-auth"}})
        objs.patch_namespaced_custom_object(GROUP, VERSION, "default", "workspaces", "alice",
                                            {"spec": {"accessStrategy": {"name": "web"}}})
        got = objs.create_namespaced_custom_object(
            "connection.workspace.jupyter.org", "v1alpha1", "default",
            "workspaceconnections", conn)
    url = got["status"]["workspaceConnectionUrl"]
    assert url.startswith("https://spaces.example.com/default/alice/bearer-auth?token=")
    assert got["status"]["workspaceConnectionType"] == "web-ui"


async def test_a_template_fills_defaults_and_bounds_what_it_allows(world: Stack) -> None:
    install_spaces(world)
    image = "public.ecr.aws/sagemaker/sagemaker-distribution:latest-cpu"
    with api(world) as c:
        objs = k8s.CustomObjectsApi(c)
        objs.create_namespaced_custom_object(GROUP, VERSION, "default", "workspacetemplates", {
            "apiVersion": f"{GROUP}/{VERSION}", "kind": "WorkspaceTemplate",
            "metadata": {"name": "lab"},
            "spec": {"displayName": "Lab", "defaultImage": image, "allowedImages": [image],
                     "primaryStorage": {"defaultSize": "20Gi", "minSize": "5Gi",
                                        "maxSize": "50Gi",
                                        "defaultStorageClassName":
                                            "sagemaker-spaces-default-storage-class",
                                        "defaultMountPath": "/home/sagemaker-user"}}})
        made = objs.create_namespaced_custom_object(GROUP, VERSION, "default", "workspaces", {
            "apiVersion": f"{GROUP}/{VERSION}", "kind": "Workspace",
            "metadata": {"name": "frank"},
            "spec": {"displayName": "frank", "templateRef": {"name": "lab"}}})
        with pytest.raises(k8s.ApiException) as refused:
            objs.create_namespaced_custom_object(GROUP, VERSION, "default", "workspaces", {
                "apiVersion": f"{GROUP}/{VERSION}", "kind": "Workspace",
                "metadata": {"name": "gina"},
                "spec": {"displayName": "gina", "templateRef": {"name": "lab"},
                         "image": "docker.io/library/python:3.12-slim",
                         "storage": {"size": "100Gi"}}})
    assert made["spec"]["image"] == image and made["spec"]["desiredStatus"] == "Running"
    assert made["spec"]["storage"] == {"size": "20Gi", "mountPath": "/home/sagemaker-user",
                                       "storageClassName":
                                           "sagemaker-spaces-default-storage-class"}
    assert refused.value.status == 403
    message = json.loads(refused.value.body)["message"]
    assert "workspace violates template 'lab' constraints: 2 violations" in message
    assert "exceeds maximum 50Gi" in message


async def test_a_template_bounds_resources_and_refuses_bounds_it_cannot_meet(
        world: Stack) -> None:
    install_spaces(world)
    image = "public.ecr.aws/sagemaker/sagemaker-distribution:latest-cpu"

    def template(name: str, cpu_min: str) -> dict[str, Any]:
        return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "WorkspaceTemplate",
                "metadata": {"name": name},
                "spec": {"displayName": name, "defaultImage": image, "defaultVolumes": [
                    {"name": "data", "persistentVolumeClaimName": "space-data",
                     "mountPath": "/data"}], "resourceBounds": {
                    "resources": {"cpu": {"min": cpu_min, "max": "2"},
                                  "memory": {"min": "1Gi", "max": "8Gi"}}}}}

    def space(name: str, requests: dict[str, str], limits: dict[str, str]) -> dict[str, Any]:
        return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Workspace",
                "metadata": {"name": name},
                "spec": {"displayName": name, "templateRef": {"name": "small"},
                         "resources": {"requests": requests, "limits": limits}}}

    with api(world) as c:
        objs = k8s.CustomObjectsApi(c)
        with pytest.raises(k8s.ApiException) as impossible:
            objs.create_namespaced_custom_object(GROUP, VERSION, "default",
                                                 "workspacetemplates", template("odd", "4"))
        objs.create_namespaced_custom_object(GROUP, VERSION, "default", "workspacetemplates",
                                             template("small", "500m"))
        ivy = objs.create_namespaced_custom_object(GROUP, VERSION, "default", "workspaces",
                                                   space("ivy", {"cpu": "1", "memory": "2Gi"},
                                                         {"memory": "2Gi"}))
        with pytest.raises(k8s.ApiException) as refused:
            objs.create_namespaced_custom_object(GROUP, VERSION, "default", "workspaces", space(
                "jack", {"cpu": "4", "memory": "2Gi"}, {"memory": "1Gi"}))
    assert [v["mountPath"] for v in ivy["spec"]["volumes"]] == ["/data"]   # the default mounts
    assert impossible.value.status == 403
    assert json.loads(impossible.value.body)["message"] == (
        'admission webhook "vworkspacetemplate-v1alpha1.kb.io" denied the request: '
        'resourceBounds for "cpu" has min 4 greater than max 2: no value can satisfy these '
        'bounds (template "odd")')
    assert refused.value.status == 403
    assert json.loads(refused.value.body)["message"] == (
        'admission webhook "vworkspace-v1alpha1.kb.io" denied the request: workspace violates '
        "template 'small' constraints: 2 violations: Memory limit must be greater than or "
        "equal to memory request; cpu request 4 exceeds maximum 2 allowed by template 'small'")


async def test_without_its_webhook_running_workspaces_are_refused(world: Stack) -> None:
    install_spaces(world)
    with api(world) as c:
        apps = k8s.AppsV1Api(c)
        apps.patch_namespaced_deployment("jupyter-k8s-controller-manager", "jupyter-k8s-system",
                                         {"spec": {"replicas": 0}})
        settle(world, 30)
        with pytest.raises(k8s.ApiException) as refused:
            create(world, workspace("henry"))
        apps.patch_namespaced_deployment("jupyter-k8s-controller-manager", "jupyter-k8s-system",
                                         {"spec": {"replicas": 1}})
        settle(world, 60)
    assert refused.value.status == 500
    assert 'no endpoints available for service "jupyter-k8s-webhook-service"' in \
        json.loads(refused.value.body)["message"]
    create(world, workspace("henry"))


async def _kernel_socket(world: Stack, name: str, kernel: str, token: str,
                         bearer: bool = True) -> Any:
    """A WebSocket to a kernel's channels through the API server's service proxy."""
    with api(world) as c:
        conf = c.configuration
        auth = conf.get_api_key_with_prefix("BearerToken") or \
            conf.get_api_key_with_prefix("authorization")
        url = (conf.host.replace("https://", "wss://") + "/api/v1/namespaces/default/services/"
               f"workspace-{name}-service:http/proxy/spaces/{name}/api/kernels/{kernel}/"
               f"channels?token={token}")
        ca = ssl.create_default_context(cafile=conf.ssl_ca_cert)
    return ws_connect(url, ssl=ca, additional_headers={"Authorization": auth} if bearer else {})


async def test_a_kernel_runs_cells_over_a_websocket_through_the_service_proxy(
        world: Stack) -> None:
    install_spaces(world)
    if store(world).find("apps/deployments", "default", "workspace-alice") is None:
        create(world, workspace("alice"))
        running(world, "alice")
    started = jupyter(world, "alice", "api/kernels", "POST")
    assert started.status_code == 201, started.text
    kernel = started.json()["id"]
    async with await _kernel_socket(world, "alice", kernel, TOKEN) as socket:
        got = await replies_to(socket, "print('hello', 42)")
        kinds = [(m["channel"], m["header"]["msg_type"]) for m in got]
        assert kinds == [("iopub", "status"), ("iopub", "stream"), ("shell", "execute_reply"),
                         ("iopub", "status")], kinds
        assert got[1]["content"] == {"name": "stdout", "text": "hello 42\n"}
        assert got[2]["parent_header"]["session"] == "s1"
        assert jupyter(world, "alice", "api/status").json()["connections"] == 1
        failed = await replies_to(socket, "import os")
        assert failed[-2]["content"]["status"] == "error", failed
    for token, bearer, status in ((TOKEN, False, 401), ("wrong", True, 403),
                                  (TOKEN, True, None)):
        kid = kernel if status else "no-such-kernel"
        with pytest.raises(InvalidStatus) as refused:
            async with await _kernel_socket(world, "alice", kid, token, bearer):
                pass
        assert refused.value.response.status_code == (status or 404)
    assert jupyter(world, "alice", f"api/kernels/{kernel}", "DELETE").status_code == 204
    assert jupyter(world, "alice", "api/kernels").json() == []
