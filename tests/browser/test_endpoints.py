"""Inference endpoints in a real browser against a real sandbox: a model deployed from the
console (a tensor parallelism the node cannot hold refused at its field by the server's 422,
then accepted with only the chosen values sent), the create operation followed live while the
sandbox's clock is stepped until the pod is Ready, a prompt sent from the endpoint's page
answered by the engine behind the Service, the Deployment read back with the Kubernetes client;
a viewer sees the page with every change disabled and the reason. Screenshots at 1440x900."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from playwright.sync_api import Page, expect

from tests.browser.cloud import CloudServer, sandbox_and_server
from tests.browser.conftest import Watch, shot, sign_in
from tests.browser.test_jobs import _advance, _choose, _clock, _finish

CLUSTER = "serve"
ENDPOINT = "chat"
MODEL = "Qwen/Qwen2.5-0.5B-Instruct"
ENDPOINTS = f"/api/v1/clusters/{CLUSTER}/endpoints"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CloudServer]:
    yield from sandbox_and_server(Path(tmp_path_factory.mktemp("endpoints-cloud")))


@pytest.fixture(scope="module")
def cloud_token(cloud: CloudServer) -> str:
    """An admin and a one-node, one-GPU cluster made over REST at the sandbox's speed; then the
    sandbox's clock stops: the tests step it."""
    token = cloud.token("ui-admin", "admin")
    with cloud.api(token) as api:
        r = api.post("/api/v1/clusters", json={
            "name": CLUSTER, "region": "us-west-2", "availability_zone": "us-west-2a",
            "instance_type": "ml.g5.8xlarge", "count": 1, "capacity_type": "on-demand"})
        assert r.status_code == 202, r.text
        assert _finish(api, r.json())["status"] == "succeeded"
    _clock(cloud, "PUT", "speed", {"speed": 0})
    return token


@pytest.fixture
def site(cloud: CloudServer) -> CloudServer:
    """The browser's server (tests/browser/conftest.py): this module's."""
    return cloud


def _kube(cloud: CloudServer) -> k8s.ApiClient:
    """The Kubernetes client on the sandbox's kubeconfig (its EKS token, its CA)."""
    kubeconfig = cloud.home.parent / "cloud" / "sandbox" / "kube" / CLUSTER / "kubeconfig"
    return k8s_config.new_client_from_config(config_file=str(kubeconfig))


def _apps(cloud: CloudServer) -> k8s.AppsV1Api:
    return k8s.AppsV1Api(_kube(cloud))


def test_deploy_from_the_console_and_call_it(page: Page, cloud: CloudServer, cloud_token: str,
                                             watch: Watch) -> None:
    sign_in(page, cloud_token, f"/clusters/{CLUSTER}")
    page.get_by_test_id("endpoints-link").click()
    expect(page).to_have_url(f"{cloud.url}/clusters/{CLUSTER}/endpoints")
    expect(page.get_by_text("No endpoints on this cluster yet.")).to_be_visible()

    page.get_by_role("button", name="Deploy model").click()
    page.get_by_label("Endpoint name").fill(ENDPOINT)
    page.get_by_label("Model", exact=True).fill(MODEL)
    _choose(page, "Instance group", "accelerated-1")
    page.get_by_label("Tensor parallel").fill("2")
    watch.allow_error("status of 422")  # the refusal the test provokes
    page.get_by_role("button", name="Deploy", exact=True).click()
    # the server's refusal at the field it names (one GPU per g5.8xlarge); nothing was made
    expect(page.get_by_label("Tensor parallel")).to_have_accessible_description(
        re.compile(r"tensor_parallel=2, but ml\.g5\.8xlarge has 1 GPU\(s\) per node"))
    shot(page, "endpoints-deploy-refused")
    with cloud.api(cloud_token) as api:
        assert api.get(ENDPOINTS).json() == []

    page.get_by_label("Tensor parallel").fill("1")
    page.get_by_label("Max model length").fill("4096")
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith(ENDPOINTS)) as req:
        page.get_by_role("button", name="Deploy", exact=True).click()
    assert req.value.post_data_json == {"name": ENDPOINT, "instance_group": "accelerated-1",
                                        "model": MODEL, "engine": "vllm",
                                        "max_model_len": 4096}
    assert req.value.headers.get("idempotency-key")
    expect(page).to_have_url(re.compile(f"/clusters/{CLUSTER}/endpoints/{ENDPOINT}\\?op=op-"))
    status = page.get_by_test_id("progress-status")
    for _ in range(30):  # the clock is stopped: each step schedules, pulls, starts, probes
        if status.inner_text() == "succeeded":
            break
        _advance(cloud, 20)
        page.wait_for_timeout(300)  # the page's live update (a WebSocket), not the model
    expect(status).to_have_text("succeeded")
    expect(page.get_by_test_id("endpoint-status")).to_have_text("Ready", timeout=15_000)
    expect(page.get_by_test_id("endpoint-ready")).to_have_text("1 / 1")
    expect(page.get_by_role("row", name=re.compile(f"^{ENDPOINT}-"))).to_contain_text(
        "hyperpod-i-")  # the pod's node

    page.get_by_label("Prompt").fill("What is a GPU?")
    with page.expect_response(lambda r: r.url.endswith("/invoke")) as answered:
        page.get_by_role("button", name="Send").click()
    sent = answered.value.json()
    text = sent["response"]["choices"][0]["text"]
    assert sent["response"]["model"] == ENDPOINT and len(text.split()) == 16  # the engine's
    expect(page.get_by_test_id("invoke-answer")).to_have_text(text)
    expect(page.get_by_text("4 prompt + 16 completion tokens")).to_be_visible()
    shot(page, "endpoints-detail-answered")

    # the Logs panel: the engine pod's last lines, as the official client reads them
    (pod,) = k8s.CoreV1Api(_kube(cloud)).list_namespaced_pod(
        "default", label_selector=f"podplane.io/endpoint={ENDPOINT}").items
    last = k8s.CoreV1Api(_kube(cloud)).read_namespaced_pod_log(
        pod.metadata.name, "default", tail_lines=1).splitlines()[-1]
    page.get_by_role("button", name="Refresh").click()
    expect(page.get_by_test_id("endpoint-logs")).to_contain_text(
        f"{pod.metadata.name} {last}")

    dep = _apps(cloud).read_namespaced_deployment(ENDPOINT, "default")
    assert dep.metadata.labels["app.kubernetes.io/managed-by"] == "podplane"
    assert dep.status.ready_replicas == 1
    engine = dep.spec.template.spec.containers[0]
    assert engine.image == "docker.io/vllm/vllm-openai:v0.9.0" and "4096" in engine.args

    page.get_by_role("link", name="Endpoints", exact=True).click()
    row = page.get_by_role("row", name=re.compile(f"^{ENDPOINT} "))
    expect(row).to_contain_text(MODEL)
    expect(row).to_contain_text("1 / 1")
    expect(row).to_contain_text("Ready")
    shot(page, "endpoints-list")


def test_viewer_sees_the_page_and_why_changes_are_disabled(page: Page, cloud: CloudServer,
                                                           cloud_token: str) -> None:
    with cloud.api(cloud_token) as api:
        r = api.post("/api/v1/tokens", json={"name": "ui-viewer", "role": "viewer"})
        assert r.status_code == 201, r.text
        viewer = str(r.json()["token"])
    sign_in(page, viewer, f"/clusters/{CLUSTER}/endpoints/{ENDPOINT}")
    expect(page.get_by_test_id("endpoint-ready")).to_have_text("1 / 1")
    page.get_by_label("Prompt").fill("Hello?")  # a prompt: only the role holds Send back
    for name in ("Scale", "Update", "Delete", "Send"):
        expect(page.get_by_role("button", name=name, exact=True)).to_be_disabled()
    page.get_by_role("button", name="Delete", exact=True).hover()
    expect(page.get_by_role("tooltip")).to_have_text("Needs the admin role; you are viewer.")
    page.get_by_role("button", name="Update", exact=True).hover()
    expect(page.get_by_role("tooltip")).to_have_text("Needs the operator role; you are viewer.")
    shot(page, "endpoints-viewer")
    page.goto(f"/clusters/{CLUSTER}/endpoints")
    expect(page.get_by_role("button", name="Deploy model")).to_be_disabled()
