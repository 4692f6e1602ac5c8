"""Training jobs in a real browser against a real sandbox: a cluster created over REST, then
a job submitted from the console (a parameter out of bounds refused at its field by the
server's 422, then accepted with an Idempotency-Key and only the changed values sent), its
submit operation followed, the job watched running and its log lines streamed live over the
WebSocket as the sandbox's clock is stepped; a viewer sees Stop, Delete and Submit disabled
with the reason; an admin deletes the job through its confirmation modal and Kubernetes no
longer has it. Screenshots at 1440x900."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Locator, Page, WebSocketRoute, expect

from tests.browser.cloud import CloudServer, sandbox_and_server
from tests.browser.conftest import Watch, shot, sign_in

CLUSTER = "train"
JOB = "ddp-one"
JOBS = f"/api/v1/clusters/{CLUSTER}/jobs"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CloudServer]:
    yield from sandbox_and_server(Path(tmp_path_factory.mktemp("jobs-cloud")))


def _finish(api: httpx.Client, op: dict[str, Any]) -> dict[str, Any]:
    deadline = time.monotonic() + 240
    while True:
        op = api.get(f"/api/v1/operations/{op['id']}/wait", params={"timeout": 20}).json()
        if op["status"] in ("succeeded", "failed", "cancelled"):
            return op
        assert time.monotonic() < deadline, op


@pytest.fixture(scope="module")
def cloud_token(cloud: CloudServer) -> str:
    """An admin, and a one-node cluster (the create pipeline installs the training operator),
    made over REST at the sandbox's speed; then the sandbox's clock stops: the tests step it."""
    token = cloud.token("ui-admin", "admin")
    with cloud.api(token) as api:
        r = api.post("/api/v1/clusters", json={
            "name": CLUSTER, "region": "us-west-2", "availability_zone": "us-west-2a",
            "instance_type": "ml.g5.8xlarge", "count": 1, "capacity_type": "on-demand"})
        assert r.status_code == 202, r.text
        op = _finish(api, r.json())
        assert op["status"] == "succeeded", [(s["name"], s["status"], s.get("error"))
                                             for s in op["steps"]]
    _clock(cloud, "PUT", "speed", {"speed": 0})
    return token


def _clock(cloud: CloudServer, method: str, what: str, body: dict[str, float]) -> None:
    httpx.request(method, f"{cloud.aws_url}/_sandbox/clock/{what}", json=body,
                  headers=cloud.control_headers, timeout=60).raise_for_status()


def _advance(cloud: CloudServer, seconds: float) -> None:
    _clock(cloud, "POST", "advance", {"seconds": seconds})


@pytest.fixture
def site(cloud: CloudServer) -> CloudServer:
    return cloud


def _select(page: Page, label: str) -> Locator:
    return page.get_by_role("button", name=re.compile(f"^{label}"))


def _choose(page: Page, label: str, option: str) -> None:
    _select(page, label).click()
    page.get_by_role("option").filter(has_text=option).first.click()


def _log_count(page: Page) -> int:
    return int(page.get_by_test_id("logs-count").inner_text())


def test_submit_from_the_console_and_watch_its_logs(page: Page, cloud: CloudServer,
                                                    cloud_token: str, watch: Watch) -> None:
    sign_in(page, cloud_token, f"/clusters/{CLUSTER}")
    page.get_by_test_id("jobs-link").click()
    expect(page).to_have_url(f"{cloud.url}/clusters/{CLUSTER}/jobs")
    expect(page.get_by_text("No jobs on this cluster yet.")).to_be_visible()
    shot(page, "jobs-empty")

    page.get_by_role("button", name="Submit job").click()
    page.get_by_label("Job name").fill(JOB)
    _choose(page, "Recipe", "pytorch-ddp")
    _choose(page, "Instance group", "accelerated-1")
    expect(page.get_by_label("epochs")).to_have_value("3")  # the recipe's default
    page.get_by_label("epochs").fill("0")
    watch.allow_error("status of 422")  # the refusal the test provokes
    # the job's page opens with the submit operation; until its apply step the job does not
    # exist yet, and a slow run reads it once before (404, then retried)
    watch.allow_error("status of 404")
    page.get_by_role("button", name="Submit job").click()
    # the server's refusal, at the field it names; nothing was created
    expect(page.get_by_label("epochs")).to_have_accessible_description(
        re.compile(r"params\.epochs must be >= 1 \(got 0\)"))
    expect(page.get_by_text("code: invalid_input")).to_be_visible()
    shot(page, "jobs-submit-refused")
    with cloud.api(cloud_token) as api:
        assert api.get(JOBS).json() == []

    page.get_by_label("epochs").fill("2")
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith(JOBS)) as req:
        page.get_by_role("button", name="Submit job").click()
    assert req.value.post_data_json == {"name": JOB, "recipe": "pytorch-ddp",
                                        "instance_group": "accelerated-1",
                                        "params": {"epochs": 2}}
    assert req.value.headers.get("idempotency-key")
    expect(page).to_have_url(re.compile(f"/clusters/{CLUSTER}/jobs/{JOB}\\?op=op-"))
    expect(page.get_by_test_id("progress-status")).to_have_text("succeeded", timeout=60_000)

    # The clock is stopped: each step of it schedules, starts and trains the pods.
    _advance(cloud, 10)
    expect(page.get_by_test_id("job-status")).to_have_text("Running")
    pod = page.get_by_role("row", name=re.compile(f"^{JOB}-pod-0 "))
    expect(pod).to_contain_text("Schedulable")  # its node's HyperPod health verdict
    expect(page.get_by_test_id("job-restarts")).to_have_text("0 of 2")
    logs = page.get_by_test_id("job-logs")
    expect(logs).to_contain_text("initializing process group")
    expect(page.get_by_test_id("logs-state")).to_have_text("Live")
    before = _log_count(page)
    expect(logs).not_to_contain_text("step 30 |")
    _advance(cloud, 10)  # a training line every 5 virtual seconds: they arrive live
    expect(logs).to_contain_text("step 30 |")
    assert _log_count(page) > before
    logs.scroll_into_view_if_needed()
    shot(page, "jobs-detail-live")

    page.get_by_role("link", name="Jobs", exact=True).click()
    row = page.get_by_role("row", name=re.compile(f"^{JOB} "))
    expect(row).to_contain_text("pytorch-ddp")
    expect(row).to_contain_text("Running")
    expect(row).to_contain_text("1 / 1")
    expect(row).to_contain_text("0 of 2")
    shot(page, "jobs-list")

    page.set_viewport_size({"width": 1024, "height": 768})
    for path in (f"/clusters/{CLUSTER}/jobs", f"/clusters/{CLUSTER}/submit-job",
                 f"/clusters/{CLUSTER}/jobs/{JOB}"):
        page.goto(path)
        expect(page.locator("main h1").first).to_be_visible()
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{path} overflows by {overflow}px at 1024"


def _flood(ws: WebSocketRoute) -> None:
    """A log stream of 3,000 lines in two batches, in place of the server's (not connected)."""
    for start in (0, 1500):
        lines = [[f"{JOB}-pod-0", f"line {i}"] for i in range(start, start + 1500)]
        ws.send(json.dumps({"type": "lines", "lines": lines,
                            "cursor": {f"{JOB}-pod-0": start + 1500}}))


def test_viewer_sees_why_changes_are_disabled(page: Page, cloud: CloudServer,
                                              cloud_token: str, make_viewer: str) -> None:
    """Also: the page keeps only the newest 2,000 lines of a stream, following the last."""
    page.route_web_socket(re.compile(r"/logs/stream"), _flood)
    sign_in(page, make_viewer, f"/clusters/{CLUSTER}/jobs/{JOB}")
    expect(page.get_by_test_id("logs-count")).to_have_text("3000")
    lines = page.get_by_test_id("log-line")
    expect(lines).to_have_count(2000)
    expect(lines.first).to_have_text(f"{JOB}-pod-0 line 1000")
    expect(lines.last).to_have_text(f"{JOB}-pod-0 line 2999")
    assert page.get_by_test_id("job-logs").evaluate(
        "e => e.scrollHeight - e.scrollTop - e.clientHeight") <= 2  # followed to the end
    for name in ("Stop", "Delete"):
        button = page.get_by_role("button", name=name, exact=True)
        expect(button).to_be_disabled()
    page.get_by_role("button", name="Delete", exact=True).hover()
    expect(page.get_by_role("tooltip")).to_have_text("Needs the admin role; you are viewer.")
    shot(page, "jobs-viewer")
    page.goto(f"/clusters/{CLUSTER}/jobs")
    expect(page.get_by_role("button", name="Submit job")).to_be_disabled()
    page.get_by_role("button", name="Submit job").hover()
    expect(page.get_by_role("tooltip")).to_have_text("Needs the operator role; you are viewer.")


def test_delete_through_the_modal(page: Page, cloud: CloudServer, cloud_token: str) -> None:
    sign_in(page, cloud_token, f"/clusters/{CLUSTER}/jobs/{JOB}")
    page.get_by_role("button", name="Delete", exact=True).click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Checkpoints and outputs in the bucket stay.")
    shot(page, "jobs-delete-modal")
    with page.expect_request(lambda r: r.method == "DELETE") as req:
        dialog.get_by_role("button", name="Delete job").click()
    assert "confirm=true" in req.value.url and req.value.headers.get("idempotency-key")
    expect(page).to_have_url(f"{cloud.url}/clusters/{CLUSTER}/jobs")
    _advance(cloud, 5)
    expect(page.get_by_text("No jobs on this cluster yet.")).to_be_visible(timeout=30_000)
    with cloud.api(cloud_token) as api:
        assert api.get(f"{JOBS}/{JOB}").status_code == 404
        audit = api.get("/api/v1/audit", params={"limit": 50}).json()
    actions = {a["action"] for a in audit if a["target"] == f"cluster/{CLUSTER}/job/{JOB}"}
    assert {"job.submit", "job.delete"} <= actions, actions


OWN_IMAGE = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"


def test_your_own_container_from_the_console_runs_to_succeeded(
        page: Page, cloud: CloudServer, cloud_token: str, watch: Watch) -> None:
    """After the delete (the node's GPU is free): your image and argv, one word per line, a
    bad variable name refused at its field, then the job followed to Succeeded and listed
    with its image."""
    sign_in(page, cloud_token, f"/clusters/{CLUSTER}/submit-job")
    page.get_by_label("Job name").fill("own-console")
    page.get_by_text("Your own container", exact=True).click()
    _choose(page, "Instance group", "accelerated-1")
    page.get_by_label("Image").fill(OWN_IMAGE)
    page.get_by_label("Command").fill("python\n/data/my_script.py")
    page.get_by_label("Environment").fill("BAD-NAME=1")
    watch.allow_error("status of 422")  # the refusal the test provokes
    # the job's page opens with the submit operation; until its apply step the job does not
    # exist yet, and a slow run reads it once before (404, then retried)
    watch.allow_error("status of 404")
    page.get_by_role("button", name="Submit job").click()
    expect(page.get_by_label("Environment")).to_have_accessible_description(
        re.compile("should match pattern"))
    page.get_by_label("Environment").fill("MY_FLAG=on")
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith(JOBS)) as req:
        page.get_by_role("button", name="Submit job").click()
    assert req.value.post_data_json == {
        "name": "own-console", "instance_group": "accelerated-1",
        "container": {"kind": "PyTorchJob", "image": OWN_IMAGE,
                      "command": ["python", "/data/my_script.py"], "env": {"MY_FLAG": "on"}}}
    expect(page.get_by_test_id("progress-status")).to_have_text("succeeded", timeout=60_000)
    for _ in range(12):  # the sandbox's training loop ends on its own, as the clock steps
        _advance(cloud, 10)
    expect(page.get_by_test_id("job-status")).to_have_text("Succeeded", timeout=30_000)
    shot(page, "jobs-own-container")
    page.get_by_role("link", name="Jobs", exact=True).click()
    expect(page.get_by_role("row", name=re.compile("^own-console "))).to_contain_text(
        OWN_IMAGE)


@pytest.fixture(scope="module")
def make_viewer(cloud: CloudServer, cloud_token: str) -> str:
    with cloud.api(cloud_token) as api:
        r = api.post("/api/v1/tokens", json={"name": "ui-viewer", "role": "viewer"})
        assert r.status_code == 201, r.text
        return str(r.json()["token"])
