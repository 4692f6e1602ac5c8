"""FSx for Lustre turned on from the console's Features panel, in a real browser against a real
sandbox: a cluster created over REST, then the FSx switch: the plan first (nothing changes,
the file system listed in order after the CSI driver and the Lustre ports), Apply, the
operation's progress live until it succeeds, and the feature shown on. What AWS and Kubernetes
hold is read back through the API (the feature's observed state) and with boto3 (FSx).
Screenshots at 1440x900."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from playwright.sync_api import Page, expect

from podplane.domain.features import fsx
from tests.browser.cloud import CloudServer, sandbox_and_server
from tests.browser.conftest import shot, sign_in

CLUSTER = "lustre"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CloudServer]:
    yield from sandbox_and_server(Path(tmp_path_factory.mktemp("fsx-cloud")))


@pytest.fixture(scope="module")
def cloud_token(cloud: CloudServer) -> str:
    token = cloud.token("ui-admin", "admin")
    with cloud.api(token) as api:
        r = api.post("/api/v1/clusters", json={
            "name": CLUSTER, "region": "us-west-2", "availability_zone": "us-west-2a",
            "instance_type": "ml.g5.8xlarge", "count": 1, "capacity_type": "on-demand"})
        assert r.status_code == 202, r.text
        op = _finish(api, r.json())
        assert op["status"] == "succeeded", [(s["name"], s["status"], s.get("error"))
                                             for s in op["steps"]]
    return token


def _finish(api: Any, op: dict[str, Any]) -> dict[str, Any]:
    deadline = time.monotonic() + 240
    while True:
        op = api.get(f"/api/v1/operations/{op['id']}/wait", params={"timeout": 20}).json()
        if op["status"] in ("succeeded", "failed", "cancelled"):
            return op
        assert time.monotonic() < deadline, op


@pytest.fixture
def site(cloud: CloudServer) -> CloudServer:
    return cloud


def _file_systems(cloud: CloudServer) -> list[dict[str, Any]]:
    client = boto3.client("fsx", endpoint_url=cloud.aws_url, region_name="us-west-2",
                          aws_access_key_id="test", aws_secret_access_key="test")
    return [f for f in client.describe_file_systems()["FileSystems"] if fsx.ours(f, CLUSTER)]


def test_turn_fsx_on_from_the_panel(page: Page, cloud: CloudServer, cloud_token: str) -> None:
    sign_in(page, cloud_token, f"/clusters/{CLUSTER}")
    panel = page.get_by_test_id("features-panel")
    expect(panel.get_by_text("FSx for Lustre storage")).to_be_visible(timeout=30_000)
    expect(page.get_by_test_id("feature-state-fsx-lustre")).to_contain_text("off")

    page.get_by_label("FSx for Lustre storage on").click()
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith(
            "/features/fsx-lustre/plan")) as planned:
        page.get_by_test_id("feature-plan").click()
    assert planned.value.post_data_json == {"enabled": True}
    plan = page.get_by_test_id("feature-plan-view")
    expect(plan).to_contain_text("Plan (6 changes, in order)")
    expect(plan).to_contain_text(f"create fsx file system podplane-{CLUSTER}")
    expect(plan).to_contain_text(f"create kube v1 PersistentVolume {fsx.PV_NAME}")
    assert _file_systems(cloud) == []   # the plan changed nothing
    shot(page, "features-fsx-plan")

    with page.expect_request(lambda r: r.method == "PATCH") as sent:
        page.get_by_test_id("feature-apply").click()
    assert sent.value.post_data_json == {"enabled": True}
    expect(page.get_by_test_id("progress-status")).to_have_text("succeeded", timeout=90_000)
    shot(page, "features-fsx-applied")
    page.get_by_role("button", name="Close", exact=True).click()
    expect(page.get_by_test_id("feature-state-fsx-lustre")).to_contain_text("on",
                                                                            timeout=30_000)
    with cloud.api(cloud_token) as api:
        view = api.get(f"/api/v1/clusters/{CLUSTER}/features/fsx-lustre").json()
    assert (view["desired_enabled"], view["observed_enabled"], view["drifted"]) == \
        (True, True, False)
    (made,) = _file_systems(cloud)
    assert (made["Lifecycle"], made["StorageCapacity"]) == ("AVAILABLE", 1200)
