"""A degraded cluster in a real browser: its cert-manager add-on deleted out of band (boto3, as
`aws eks delete-addon`), the cluster page says degraded and names what depends on it, the
Reconcile dialog shows the plan first, then the operation's steps live, and the cluster is
active again. Screenshots of the degraded page and the plan."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from playwright.sync_api import Page, expect

from tests.browser.cloud import CloudServer, sandbox_and_server
from tests.browser.conftest import shot, sign_in

pytestmark = pytest.mark.slow
BODY = {"name": "beta", "region": "us-west-2", "availability_zone": "us-west-2a",
        "instance_type": "ml.g5.8xlarge", "count": 1, "capacity_type": "on-demand"}
OPERATOR = "amazon-sagemaker-hyperpod-training-operator"


@pytest.fixture(scope="module")
def cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CloudServer]:
    yield from sandbox_and_server(Path(tmp_path_factory.mktemp("cloud")))


@pytest.fixture(scope="module")
def token(cloud: CloudServer) -> str:
    return cloud.token("ui-admin", "admin")


@pytest.fixture
def site(cloud: CloudServer) -> CloudServer:
    return cloud


def _until(cloud: CloudServer, token: str, path: str, done: Any, seconds: float = 120) -> Any:
    """Read `path` until `done(body)`: the sandbox runs on its own (speed 600)."""
    deadline = time.monotonic() + seconds
    with cloud.api(token) as api:
        while time.monotonic() < deadline:
            body = api.get(path).json()
            if done(body):
                return body
            time.sleep(0.5)
    raise AssertionError(f"{path} never got there: {body}")


def test_degraded_cluster_is_reconciled_from_its_page(page: Page, cloud: CloudServer,
                                                       token: str) -> None:
    with cloud.api(token) as api:
        r = api.post("/api/v1/clusters", json=BODY)
        assert r.status_code == 202, r.text
    op = _until(cloud, token, f"/api/v1/operations/{r.json()['id']}",
                lambda o: o["status"] in ("succeeded", "failed"), seconds=300)
    assert op["status"] == "succeeded", op["steps"]
    eks = boto3.client("eks", endpoint_url=cloud.aws_url, region_name="us-west-2",
                       aws_access_key_id="test", aws_secret_access_key="test")
    eks.delete_addon(clusterName="beta", addonName="cert-manager")
    _until(cloud, token, "/api/v1/clusters/beta", lambda c: c["state"] == "degraded")

    sign_in(page, token, "/clusters/beta")
    expect(page.get_by_test_id("cluster-state")).to_have_text("degraded")
    drift = page.get_by_test_id("drift")
    expect(drift).to_contain_text("cert-manager")
    expect(drift).to_contain_text(f"needed by {OPERATOR}")
    shot(page, "clusters-degraded")

    page.get_by_role("button", name="Reconcile", exact=True).click()
    dialog = page.get_by_role("dialog")
    plan = dialog.get_by_test_id("reconcile-plan")
    expect(plan).to_contain_text("cert-manager", timeout=30_000)
    expect(plan.get_by_role("row")).to_have_count(2)  # the header and the one repair
    expect(plan).to_contain_text("create")
    shot(page, "clusters-reconcile-plan")

    dialog.get_by_role("button", name="Reconcile", exact=True).click()
    expect(dialog.get_by_test_id("reconcile-progress")).to_be_visible(timeout=30_000)
    expect(dialog.get_by_test_id("progress-status")).to_have_text("succeeded", timeout=60_000)
    dialog.get_by_role("button", name="Close").click()
    # the dependants (the training operator) go back to ACTIVE on the sandbox's clock after
    # cert-manager does: on a loaded CI machine that took over 20 s once
    expect(page.get_by_test_id("cluster-state")).to_have_text("active", timeout=60_000)
    expect(page.get_by_test_id("drift")).to_have_count(0)
    assert eks.describe_addon(clusterName="beta", addonName="cert-manager")["addon"][
        "status"] == "ACTIVE"
