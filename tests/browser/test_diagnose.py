"""The console's Diagnose action in a real browser against a real sandbox: a healthy node is
"healthy" with no findings; a node the sandbox's health agent flags for a reboot shows the
finding, its evidence with each source, the ladder with its costs and the suggested reboot,
which a viewer cannot make and an admin makes after confirming it (the reboot is read back
from the sandbox's ledger and HyperPod); a failed operation's Diagnose names the failing
step. The sandbox's clock is stopped after the create: the tests step it."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest
from playwright.sync_api import Locator, Page, expect

from tests.browser.cloud import CloudServer, sandbox_and_server
from tests.browser.conftest import Watch, shot, sign_in

CLUSTER = "diag"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CloudServer]:
    yield from sandbox_and_server(Path(tmp_path_factory.mktemp("diagnose-cloud")))


@pytest.fixture
def site(cloud: CloudServer) -> CloudServer:
    return cloud


def _finish(api: httpx.Client, op: dict[str, Any]) -> dict[str, Any]:
    deadline = time.monotonic() + 240
    while True:
        op = api.get(f"/api/v1/operations/{op['id']}/wait", params={"timeout": 20}).json()
        if op["status"] in ("succeeded", "failed", "cancelled"):
            return op
        assert time.monotonic() < deadline, op


def _sandbox(cloud: CloudServer, method: str, path: str, **kw: Any) -> Any:
    r = httpx.request(method, f"{cloud.aws_url}/_sandbox/{path}", headers=cloud.control_headers,
                      timeout=60, **kw)
    r.raise_for_status()
    return r.json() if r.content else None


def _advance(cloud: CloudServer, seconds: float) -> None:
    _sandbox(cloud, "POST", "clock/advance", json={"seconds": seconds})


def _sagemaker(cloud: CloudServer) -> Any:
    return boto3.client("sagemaker", region_name="us-west-2", endpoint_url=cloud.aws_url,
                        aws_access_key_id="test", aws_secret_access_key="test")


@pytest.fixture(scope="module")
def tokens(cloud: CloudServer) -> dict[str, str]:
    """An admin and a viewer, and a one-node cluster made over REST at the sandbox's speed;
    then the sandbox's clock stops."""
    admin = cloud.token("ui-admin", "admin")
    with cloud.api(admin) as api:
        r = api.post("/api/v1/clusters", json={
            "name": CLUSTER, "region": "us-west-2", "availability_zone": "us-west-2a",
            "instance_type": "ml.g5.8xlarge", "count": 1, "deep_health_checks": False})
        assert r.status_code == 202, r.text
        op = _finish(api, r.json())
        assert op["status"] == "succeeded", [(s["name"], s["status"], s.get("error"))
                                             for s in op["steps"]]
        viewer = api.post("/api/v1/tokens", json={"name": "ui-viewer", "role": "viewer"})
        assert viewer.status_code == 201, viewer.text
    _sandbox(cloud, "PUT", "clock/speed", json={"speed": 0})
    return {"admin": admin, "viewer": str(viewer.json()["token"])}


@pytest.fixture(scope="module")
def node(cloud: CloudServer, tokens: dict[str, str]) -> str:
    (summary,) = _sagemaker(cloud).list_cluster_nodes(ClusterName=CLUSTER)[
        "ClusterNodeSummaries"]
    return str(summary["InstanceId"])


def _diagnose_node(page: Page, node: str) -> Locator:
    page.get_by_role("radio", name=f"Select node {node}").check()
    page.get_by_role("button", name="Diagnose", exact=True).click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text(f"Diagnosis of node {node}")
    return dialog


def test_a_healthy_node_is_healthy_with_no_findings(page: Page, cloud: CloudServer,
                                                   tokens: dict[str, str], node: str) -> None:
    sign_in(page, tokens["viewer"], f"/clusters/{CLUSTER}")
    dialog = _diagnose_node(page, node)
    expect(dialog.get_by_test_id("verdict-conclusion")).to_have_text("healthy")
    expect(dialog.get_by_test_id("verdict-status")).to_have_text("ok")
    expect(dialog.get_by_test_id("verdict-no-findings")).to_be_visible()
    expect(dialog.get_by_text("Suggested next step")).to_have_count(0)
    shot(page, "diagnose-healthy-node")


def _until_flagged(cloud: CloudServer, token: str, node: str) -> None:
    """The node controller copies HyperPod's health onto the Node at its next pass."""
    with cloud.api(token) as api:
        for _ in range(100):
            _advance(cloud, 10)
            verdict = api.get(f"/api/v1/clusters/{CLUSTER}/diagnostics/nodes/{node}").json()
            if verdict["status"] == "fail":
                return
            time.sleep(0.1)
    raise AssertionError(f"the node was never flagged: {verdict}")


def test_a_viewer_sees_the_finding_and_its_evidence_but_cannot_reboot(
        page: Page, cloud: CloudServer, tokens: dict[str, str], node: str) -> None:
    _sandbox(cloud, "POST", "faults", json={
        "kind": "node_unhealthy", "cluster": CLUSTER, "instance_id": node, "action": "reboot",
        "reason": "NvidiaErrorReboot:XidHardwareFailure"})
    _until_flagged(cloud, tokens["viewer"], node)
    sign_in(page, tokens["viewer"], f"/clusters/{CLUSTER}")
    dialog = _diagnose_node(page, node)
    expect(dialog.get_by_test_id("verdict-status")).to_have_text("fail")
    expect(dialog.get_by_test_id("verdict-conclusion")).to_contain_text("NvidiaErrorReboot")
    finding = dialog.get_by_test_id("finding-health_label")
    expect(finding).to_contain_text("flagged the node for reboot")
    evidence = finding.get_by_role("table", name="Evidence for health_label")
    expect(evidence).to_contain_text("hyperpod:ListClusterNodes")
    expect(evidence).to_contain_text("kubernetes:Node labels")
    expect(evidence).to_contain_text("hyperpod:ListClusterEvents")  # the health check's event
    expect(evidence).to_contain_text(
        "sagemaker.amazonaws.com/node-health-status=UnschedulablePendingReboot")
    ladder = dialog.get_by_role("table", name="Escalation ladder")
    expect(ladder.get_by_role("row", name=re.compile("^Reboot"))).to_contain_text("kept")
    expect(ladder.get_by_role("row", name=re.compile("^Replace"))).to_contain_text("lost")
    expect(dialog.get_by_test_id("next-call")).to_have_text(
        f'node_reboot(cluster="{CLUSTER}", node="{node}")')
    reboot = dialog.get_by_role("button", name=f"Reboot node {node}")
    expect(reboot).to_be_disabled()
    reboot.hover()
    expect(page.get_by_role("tooltip")).to_have_text("Needs the operator role; you are viewer.")
    shot(page, "diagnose-sick-node-viewer")


def test_an_admin_confirms_the_suggested_reboot_and_it_clears_the_fault(
        page: Page, cloud: CloudServer, tokens: dict[str, str], node: str,
        watch: Watch) -> None:
    before = _sandbox(cloud, "GET", "ledger",
                      params={"service": "sagemaker", "action": "BatchRebootClusterNodes"})
    sign_in(page, tokens["admin"], f"/clusters/{CLUSTER}")
    dialog = _diagnose_node(page, node)
    dialog.get_by_role("button", name=f"Reboot node {node}").click()
    confirm = page.get_by_role("dialog")
    expect(confirm).to_contain_text(f"Reboot node {node}?")
    expect(confirm).to_contain_text("instance storage is kept")
    confirm.get_by_role("button", name="Cancel").click()  # cancelled: nothing is sent
    expect(page.get_by_test_id("next-call")).to_be_visible()
    assert _sandbox(cloud, "GET", "ledger", params={
        "service": "sagemaker", "action": "BatchRebootClusterNodes"}) == before

    page.get_by_role("button", name=f"Reboot node {node}").click()
    shot(page, "diagnose-confirm-reboot")
    with page.expect_response(lambda r: r.url.endswith("/reboot")
                              and r.request.method == "POST") as resp:
        page.get_by_role("dialog").get_by_role("button", name=f"Reboot node {node}").click()
    assert resp.value.status == 202 and resp.value.request.headers.get("idempotency-key")
    op_id = resp.value.json()["id"]
    expect(page.get_by_role("dialog").get_by_role("link", name=op_id)).to_be_visible()
    _advance(cloud, 5)  # the operation's step calls HyperPod
    reboots = _until(lambda: _sandbox(cloud, "GET", "ledger", params={
        "service": "sagemaker", "action": "BatchRebootClusterNodes"}), len(before) + 1)
    assert reboots[-1]["target"] == CLUSTER and reboots[-1]["params"]["node_ids"] == [node]
    for _ in range(5):  # the reboot takes HyperPod about 3 virtual minutes
        _advance(cloud, 60)
    expect(page.get_by_test_id("diagnose-started-status")).to_have_text("succeeded",
                                                                        timeout=60_000)
    shot(page, "diagnose-reboot-started")
    described = _sagemaker(cloud).describe_cluster_node(ClusterName=CLUSTER, NodeId=node)
    assert described["NodeDetails"]["InstanceStatus"]["Status"] == "Running"
    _advance(cloud, 10)  # the node controller copies the recovered health onto the Node
    page.get_by_role("button", name="Diagnose again").click()
    expect(page.get_by_test_id("verdict-conclusion")).to_have_text("healthy")


def _until(read: Any, count: int) -> list[dict[str, Any]]:
    for _ in range(100):
        found = list(read())
        if len(found) >= count:
            return found
        time.sleep(0.1)
    raise AssertionError(f"fewer than {count} entries: {found}")


def test_a_failed_operation_names_its_failing_step(page: Page, cloud: CloudServer,
                                                   tokens: dict[str, str], node: str) -> None:
    fault = _sandbox(cloud, "POST", "faults", json={
        "kind": "access_denied", "service": "sagemaker", "action": "BatchRebootClusterNodes"})
    with cloud.api(tokens["admin"]) as api:
        r = api.post(f"/api/v1/clusters/{CLUSTER}/nodes/{node}/reboot")
        assert r.status_code == 202, r.text
        _advance(cloud, 5)
        failed = _finish(api, r.json())
    _sandbox(cloud, "DELETE", f"faults/{fault['id']}")
    assert failed["status"] == "failed", failed
    sign_in(page, tokens["viewer"], f"/operations/{failed['id']}")
    page.get_by_role("button", name="Diagnose", exact=True).click()
    dialog = page.get_by_role("dialog")
    expect(dialog.get_by_test_id("verdict-conclusion")).to_contain_text("Step 'reboot'")
    expect(dialog.get_by_test_id("verdict-conclusion")).to_contain_text(
        "sagemaker:BatchRebootClusterNodes")
    finding = dialog.get_by_test_id("finding-access_denied")
    expect(finding).to_contain_text("operation step")
    expect(finding).to_contain_text("not authorized to perform")
    expect(dialog.get_by_test_id("next-call")).to_contain_text("operation_retry_step")
    expect(dialog.get_by_role("button", name="Retry step reboot")).to_be_disabled()
    shot(page, "diagnose-failed-operation")
