"""The console's inference pages beyond a plain deploy, in a real browser against a real
sandbox (three one-GPU g5 nodes, KEDA on):

- a model downloaded from the Models page with a Hugging Face token typed into a password field:
  the token is sent once, appears nowhere on the page or in any answer, and the objects are
  read back from the bucket with boto3;
- an SGLang endpoint deployed with the cache-aware router and autoscaling (a 422 for the
  autoscaling range shows at its field first); its page shows the router's pods and KEDA's
  state; the router Deployment and the ScaledObject are read with the Kubernetes client;
- a warm pool created, an endpoint assigned from the pool's page (the pod states change, the
  endpoint list marks it with its pool), a scale-in that would need the serving pod refused
  with the reason in words (409 pool_pods_assigned; the Deployment unchanged), an unassign
  that drains, and the pool deleted.
Screenshots at 1440x900."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from playwright.sync_api import Error, Page, Response, expect

from tests.browser.cloud import KEYS, CloudServer, sandbox_and_server
from tests.browser.conftest import Watch, shot, sign_in
from tests.browser.test_jobs import _advance, _choose, _clock, _finish

CLUSTER = "infer"
GROUP = "accelerated-1"
MODEL = "Qwen/Qwen2.5-0.5B-Instruct"
GATED = "sandbox-models/tiny-chat-gated"
CANARY = "hf_ConsoleCanaryDoNotShow0123456789abcd"
API = f"/api/v1/clusters/{CLUSTER}"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CloudServer]:
    yield from sandbox_and_server(Path(tmp_path_factory.mktemp("inference-cloud")))


@pytest.fixture(scope="module")
def cloud_token(cloud: CloudServer) -> str:
    """An admin, a three-node cluster and KEDA, made over REST at the sandbox's speed; then
    the sandbox's clock stops: the tests step it."""
    token = cloud.token("ui-admin", "admin")
    with cloud.api(token) as api:
        r = api.post("/api/v1/clusters", json={
            "name": CLUSTER, "region": "us-west-2", "availability_zone": "us-west-2a",
            "instance_type": "ml.g5.8xlarge", "count": 3, "capacity_type": "on-demand"})
        assert r.status_code == 202, r.text
        assert _finish(api, r.json())["status"] == "succeeded"
        r = api.patch(f"{API}/features/keda", json={"enabled": True})
        assert r.status_code == 202, r.text
        assert _finish(api, r.json())["status"] == "succeeded"
    _clock(cloud, "PUT", "speed", {"speed": 0})
    return token


@pytest.fixture
def site(cloud: CloudServer) -> CloudServer:
    return cloud


def _kube(cloud: CloudServer) -> k8s.ApiClient:
    """The Kubernetes client on the sandbox's kubeconfig (its EKS token, its CA)."""
    kubeconfig = cloud.home.parent / "cloud" / "sandbox" / "kube" / CLUSTER / "kubeconfig"
    return k8s_config.new_client_from_config(config_file=str(kubeconfig))


def _follow(page: Page, cloud: CloudServer, want: str = "succeeded") -> None:
    """Step the stopped clock until the followed operation ends."""
    status = page.get_by_test_id("progress-status")
    for _ in range(40):
        if status.inner_text() in ("succeeded", "failed"):
            break
        _advance(cloud, 20)
        page.wait_for_timeout(300)  # the page's live update (a WebSocket)
    expect(status).to_have_text(want)


def _keep(answers: list[str], response: Response) -> None:
    if "/api/" in response.url:
        try:
            answers.append(response.text())
        except Error:  # a body the browser did not keep (a WebSocket upgrade)
            pass


def test_download_a_gated_model_with_a_token_that_is_never_shown(
        page: Page, cloud: CloudServer, cloud_token: str) -> None:
    sign_in(page, cloud_token, f"/clusters/{CLUSTER}/endpoints")
    page.get_by_role("button", name="Models").click()
    expect(page).to_have_url(f"{cloud.url}/clusters/{CLUSTER}/models")
    expect(page.get_by_text("No models in the bucket yet.")).to_be_visible()
    token = page.get_by_label("Hugging Face token")
    expect(token).to_have_attribute("type", "password")
    page.get_by_label("Hugging Face repository").fill(GATED)
    page.get_by_label("Folder name").fill("gated")
    token.fill(CANARY)
    answers: list[str] = []
    page.on("response", lambda r: _keep(answers, r))
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith("/models")) as req:
        page.get_by_role("button", name="Download", exact=True).click()
    assert req.value.post_data_json == {"name": "gated", "source": GATED, "hf_token": CANARY}
    expect(page).to_have_url(re.compile(r"/models\?op=op-"))
    expect(token).to_have_value("")  # cleared once sent
    _follow(page, cloud)
    row = page.get_by_role("row", name=re.compile("^gated "))
    expect(row).to_contain_text("yes", timeout=15_000)
    expect(row).to_contain_text("models/gated/")
    shot(page, "models-downloaded")
    assert CANARY not in page.content()
    assert not [a for a in answers if CANARY in a]
    s3 = boto3.client("s3", endpoint_url=cloud.aws_url, region_name="us-west-2",
                      aws_access_key_id=KEYS["AWS_ACCESS_KEY_ID"],
                      aws_secret_access_key=KEYS["AWS_SECRET_ACCESS_KEY"])
    bucket = next(b["Name"] for b in s3.list_buckets()["Buckets"]
                  if b["Name"].startswith("podplane-"))
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="models/gated/")["Contents"]]
    assert "models/gated/config.json" in keys and "models/gated/model.safetensors" in keys


def test_deploy_sglang_with_the_router_and_autoscaling(
        page: Page, cloud: CloudServer, cloud_token: str, watch: Watch) -> None:
    sign_in(page, cloud_token, f"/clusters/{CLUSTER}/deploy-endpoint")
    page.get_by_label("Endpoint name").fill("sg")
    page.get_by_label("Model", exact=True).fill(MODEL)
    _choose(page, "Instance group", GROUP)
    expect(page.get_by_label("SGLang router")).to_have_count(0)  # vLLM has no router
    _choose(page, "Engine", "sglang")
    _choose(page, "SGLang router", "cache_aware")
    page.get_by_text("Autoscale with KEDA").click()
    watch.allow_error("status of 422")  # the refusal the test provokes: no maximum
    page.get_by_role("button", name="Deploy", exact=True).click()
    expect(page.get_by_label("Max replicas")).to_have_accessible_description(
        re.compile("greater than or equal to 1"))
    page.get_by_label("Max replicas").fill("2")
    # the endpoint's page may read it before its operation made it: "Waiting for the creating
    # operation" (components/NotLoaded.tsx)
    watch.allow_error("status of 404")
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith("/endpoints")) as req:
        page.get_by_role("button", name="Deploy", exact=True).click()
    assert req.value.post_data_json == {
        "name": "sg", "instance_group": GROUP, "model": MODEL, "engine": "sglang",
        "router": "cache_aware", "autoscaling": {"max_replicas": 2}}
    _follow(page, cloud)
    expect(page.get_by_test_id("endpoint-router")).to_have_text(
        "cache_aware (1 / 1 router pods Ready)", timeout=15_000)
    expect(page.get_by_test_id("endpoint-autoscaling")).to_have_text(
        re.compile(r'^1-2 on sglang:num_running_reqs\{model_name="sg"\} \(target 8 per pod\)'))
    shot(page, "endpoints-sglang-router-autoscaling")
    apps = k8s.AppsV1Api(_kube(cloud))
    args = apps.read_namespaced_deployment("sg-router", "default").spec.template.spec \
        .containers[0].args
    assert args[args.index("--policy") + 1] == "cache_aware"
    so = k8s.CustomObjectsApi(_kube(cloud)).get_namespaced_custom_object(
        "keda.sh", "v1alpha1", "default", "scaledobjects", "sg")
    assert (so["spec"]["minReplicaCount"], so["spec"]["maxReplicaCount"]) == (1, 2)
    assert so["spec"]["scaleTargetRef"]["name"] == "sg"


def _pool_pods(cloud: CloudServer) -> dict[str, str | None]:
    pods = k8s.CoreV1Api(_kube(cloud)).list_namespaced_pod(
        "default", label_selector="podplane.io/pool=warm").items
    return {p.metadata.name: (p.metadata.labels or {}).get("podplane.io/assigned")
            for p in pods if not p.metadata.deletion_timestamp}


def test_a_warm_pool_from_the_console(page: Page, cloud: CloudServer, cloud_token: str,
                                      watch: Watch) -> None:
    sign_in(page, cloud_token, f"/clusters/{CLUSTER}/endpoints")
    page.get_by_role("button", name="Warm pools").click()
    page.get_by_role("button", name="Create pool").click()
    page.get_by_label("Pool name").fill("warm")
    page.get_by_label("Model", exact=True).fill(MODEL)
    _choose(page, "Instance group", GROUP)
    page.get_by_label("Pods", exact=True).fill("2")
    # the pool's page reads the pool before its operation made it: "Waiting for the pool"
    watch.allow_error("status of 404")
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith("/pools")) as req:
        page.get_by_role("button", name="Create pool").click()
    assert req.value.post_data_json == {"name": "warm", "instance_group": GROUP,
                                        "model": MODEL, "replicas": 2}
    _follow(page, cloud)
    expect(page.get_by_test_id("pool-ready")).to_have_text("2 / 2", timeout=15_000)
    expect(page.get_by_test_id("pod-state").filter(has_text="free")).to_have_count(2)

    page.get_by_role("button", name="Assign", exact=True).click()
    page.get_by_role("dialog").get_by_label("Endpoint", exact=True).fill("chat")
    page.get_by_role("dialog").get_by_label("Pods").fill("1")
    page.get_by_role("dialog").get_by_role("button", name="Assign").click()
    _follow(page, cloud)
    states = page.get_by_test_id("pod-state")
    expect(states.filter(has_text="assigned to chat")).to_have_count(1, timeout=15_000)
    expect(states.filter(has_text="free")).to_have_count(1)
    assert sorted(map(str, _pool_pods(cloud).values())) == ["None", "chat"]
    shot(page, "pool-assigned")

    watch.allow_error("status of 409")  # the refusal the test provokes
    page.get_by_role("button", name="Scale", exact=True).click()
    page.get_by_role("dialog").get_by_label("Pods").fill("0")
    page.get_by_role("dialog").get_by_role("button", name="Scale").click()
    alert = page.get_by_role("dialog").get_by_text("Pods of this pool still serve an endpoint")
    expect(alert).to_be_visible()
    expect(page.get_by_role("dialog")).to_contain_text("code: pool_pods_assigned")
    expect(page.get_by_role("dialog")).to_contain_text("Hint: Unassign an endpoint first")
    shot(page, "pool-scale-refused")
    page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
    dep = k8s.AppsV1Api(_kube(cloud)).read_namespaced_deployment("warm", "default")
    assert dep.spec.replicas == 2 and len(_pool_pods(cloud)) == 2

    page.get_by_role("link", name="Endpoints", exact=True).click()
    row = page.get_by_role("row", name=re.compile("^chat "))
    expect(row).to_contain_text("warm")
    expect(row).to_contain_text("1 / 1")
    row.get_by_role("link", name="chat").click()
    expect(page.get_by_text("Served by warm pool warm")).to_be_visible()
    expect(page.get_by_role("button", name="Scale", exact=True)).to_have_count(0)
    page.get_by_role("link", name="pool's page").click()

    page.get_by_role("button", name="Unassign chat").click()
    expect(page.get_by_role("dialog").get_by_label("Pods")).to_have_value("0")
    page.get_by_role("dialog").get_by_role("button", name="Unassign").click()
    _follow(page, cloud)
    expect(page.get_by_test_id("pool-free")).to_have_text("2", timeout=15_000)
    assert list(_pool_pods(cloud).values()) == [None, None]

    page.get_by_role("button", name="Delete", exact=True).click()
    page.get_by_role("button", name="Delete pool").click()
    expect(page).to_have_url(f"{cloud.url}/clusters/{CLUSTER}/pools")
    with cloud.api(cloud_token) as api:
        for _ in range(30):
            if api.get(f"{API}/pools").json() == []:
                break
            _advance(cloud, 20)
        assert api.get(f"{API}/pools").json() == []


def test_viewer_reads_models_and_pools_with_changes_disabled(
        page: Page, cloud: CloudServer, cloud_token: str) -> None:
    with cloud.api(cloud_token) as api:
        r = api.post("/api/v1/tokens", json={"name": "ui-infer-viewer", "role": "viewer"})
        assert r.status_code == 201, r.text
        viewer = str(r.json()["token"])
        models = len(api.get(f"{API}/models").json())
    sign_in(page, viewer, f"/clusters/{CLUSTER}/models")
    expect(page.get_by_role("heading", name=f"In the bucket ({models})")).to_be_visible()
    page.get_by_label("Hugging Face repository").fill(GATED)
    page.get_by_label("Folder name").fill("mine")  # filled: only the role holds it back
    download = page.get_by_role("button", name="Download", exact=True)
    expect(download).to_be_disabled()
    download.hover()
    expect(page.get_by_role("tooltip")).to_have_text("Needs the operator role; you are viewer.")
    page.goto(f"/clusters/{CLUSTER}/pools")
    expect(page.get_by_text("No warm pools on this cluster yet.")).to_be_visible()
    expect(page.get_by_role("button", name="Create pool")).to_be_disabled()
