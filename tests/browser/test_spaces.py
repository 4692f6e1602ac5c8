"""Dev spaces in a real browser against a real sandbox (its workspace operator and fake
JupyterLab). The Spaces page reached from the cluster page; the New space form with the
server's defaults as placeholders, a bad name, memory and GPU count refused in the page
(nothing sent), then a good request sent with only the changed value and refused by the server
while dev spaces are off (its hint shown, nothing made). With the `spaces` feature on (over
REST): an admin's template made on the Templates page, a space made from the form with that
template picked, its create operation followed until it is Running, its mounts and its
server's log lines; an object written to the cluster bucket under data/ with boto3, as a job
writes it, seen in the Files panel; Stop and Start through their modals, the file still there.
A viewer sees New space, Start, Stop, Delete and Files disabled with the reason. An admin is
offered to delete the home too, an operator is not; the operator's delete keeps the home claim.
Screenshots at 1440x900."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from playwright.sync_api import Locator, Page, Request, expect

from podplane.domain.spaces import render
from tests.browser.cloud import CloudServer, admin_and_cluster, finish, sandbox_and_server
from tests.browser.conftest import Watch, shot, sign_in

CLUSTER = "dev"
SPACE = "notebook"
RUN = "run-7"
SPACES = f"/api/v1/clusters/{CLUSTER}/spaces"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CloudServer]:
    yield from sandbox_and_server(Path(tmp_path_factory.mktemp("spaces-cloud")))


@pytest.fixture(scope="module")
def cloud_token(cloud: CloudServer) -> str:
    return admin_and_cluster(cloud, CLUSTER)


@pytest.fixture
def site(cloud: CloudServer) -> CloudServer:
    """The browser's server (tests/browser/conftest.py): this module's."""
    return cloud


def test_new_space_form_checks_then_the_server_refuses_while_spaces_are_off(
        page: Page, cloud: CloudServer, cloud_token: str, watch: Watch) -> None:
    sign_in(page, cloud_token, f"/clusters/{CLUSTER}")
    page.get_by_test_id("spaces-link").click()
    expect(page).to_have_url(f"{cloud.url}/clusters/{CLUSTER}/spaces")
    expect(page.get_by_text("No spaces on this cluster yet.")).to_be_visible()
    shot(page, "spaces-list-empty")

    page.get_by_role("button", name="New space").click()
    expect(page).to_have_url(f"{cloud.url}/clusters/{CLUSTER}/new-space")
    # empty fields take the template's defaults, else the server's: shown as placeholders
    expect(page.get_by_label("GPUs", exact=True)).to_have_value("0")
    for label, value in (("CPU", "1"), ("Memory", "4Gi"), ("Home volume (GiB)", "20"),
                         ("Idle stop (minutes)", "60")):
        expect(page.get_by_label(label, exact=True)).to_have_attribute("placeholder", value)
    create = page.get_by_role("button", name="Create space")
    expect(create).to_be_disabled()  # no name yet

    posts: list[Request] = []
    page.on("request", lambda r: posts.append(r) if r.method == "POST" else None)
    page.get_by_label("Space name").fill("My_Notebook")
    expect(page.get_by_label("Space name")).to_have_accessible_description(
        re.compile(r"1-40 lowercase letters, digits or '-'"))
    expect(create).to_be_disabled()
    page.get_by_label("Space name").fill("a" * 41)  # a DNS label, but the Service's name
    expect(create).to_be_disabled()                  # would pass 63 characters
    page.get_by_label("Space name").fill("notebook")
    page.get_by_label("Memory", exact=True).fill("8GB")
    expect(page.get_by_label("Memory", exact=True)).to_have_accessible_description(
        re.compile("A memory quantity in Mi or Gi"))
    expect(create).to_be_disabled()
    page.get_by_label("GPUs", exact=True).fill("9")
    expect(page.get_by_label("GPUs", exact=True)).to_have_accessible_description(
        re.compile("A whole number from 0 to 8"))
    shot(page, "spaces-new-refused-in-page")
    assert posts == []  # the page refused; nothing went to the server

    page.get_by_label("Memory", exact=True).fill("8Gi")
    page.get_by_label("GPUs", exact=True).fill("0")
    watch.allow_error("status of 409")  # the refusal the test provokes
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith(SPACES)) as req:
        create.click()
    assert req.value.post_data_json == {"name": "notebook", "memory": "8Gi"}
    assert req.value.headers.get("idempotency-key")
    refused = page.get_by_role("group").filter(has_text="The space was not created")
    expect(refused).to_contain_text(f"Dev spaces are off on '{CLUSTER}'.")
    expect(refused).to_contain_text("Turn on the 'spaces' feature first")
    expect(refused).to_contain_text("code: feature_off")
    shot(page, "spaces-new-refused-spaces-off")
    with cloud.api(cloud_token) as api:
        assert api.get(SPACES).json() == []


@pytest.fixture(scope="module")
def viewer_token(cloud: CloudServer, cloud_token: str) -> str:
    with cloud.api(cloud_token) as api:
        r = api.post("/api/v1/tokens", json={"name": "ui-viewer", "role": "viewer"})
        assert r.status_code == 201, r.text
        return str(r.json()["token"])


def test_viewer_sees_why_new_space_is_disabled(page: Page, viewer_token: str) -> None:
    sign_in(page, viewer_token, f"/clusters/{CLUSTER}/spaces")
    new = page.get_by_role("button", name="New space")
    expect(new).to_be_disabled()
    new.hover()
    expect(page.get_by_role("tooltip")).to_have_text("Needs the operator role; you are viewer.")
    page.goto(f"/clusters/{CLUSTER}/new-space")
    page.get_by_label("Space name").fill("notebook")
    expect(page.get_by_role("button", name="Create space")).to_be_disabled()


def _feature_on(cloud: CloudServer, token: str) -> None:
    """The `spaces` feature turned on over REST, as an operator would from the Features panel
    (tests/browser/test_features.py drives that panel)."""
    with cloud.api(token) as api:
        r = api.patch(f"/api/v1/clusters/{CLUSTER}/features/spaces", json={"enabled": True})
        assert r.status_code == 202, r.text
        op = finish(api, r.json())
        assert op["status"] == "succeeded", [(s["name"], s["status"], s.get("error"))
                                             for s in op["steps"]]


def _bucket(cloud: CloudServer, token: str) -> str:
    with cloud.api(token) as api:
        return str(api.get(f"/api/v1/clusters/{CLUSTER}").json()["facts"]["bucket"])


def _s3(cloud: CloudServer) -> Any:
    return boto3.client("s3", endpoint_url=cloud.aws_url, region_name="us-west-2",
                        aws_access_key_id="test", aws_secret_access_key="test")


def _follow(page: Page) -> None:
    """The operation the page follows (?op=) until it succeeds."""
    expect(page).to_have_url(re.compile(r"\?op=op-"))
    expect(page.get_by_test_id("progress-status")).to_have_text("succeeded", timeout=120_000)


def _files(page: Page) -> Locator:
    return page.get_by_test_id("space-files")


def test_a_space_sees_what_a_job_wrote_to_the_bucket_and_survives_a_stop(
        page: Page, cloud: CloudServer, cloud_token: str, watch: Watch) -> None:
    # the space's page opens with its create's operation; until the operation's apply step the
    # Workspace does not exist yet, and a slow run reads it once before (404, then retried)
    watch.allow_error("status of 404")
    _feature_on(cloud, cloud_token)
    # an admin's template for first notebooks, made on the Templates page; never
    # idle-stopped: the sandbox's clock runs ten virtual minutes a second
    sign_in(page, cloud_token, f"/clusters/{CLUSTER}/spaces")
    page.get_by_role("button", name="Templates").click()
    expect(page.get_by_text("No templates: spaces get podplane's defaults.")).to_be_visible()
    page.get_by_role("button", name="New template").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Template name").fill("starter")
    dialog.get_by_label("Default memory").fill("2Gi")
    dialog.get_by_label("Max CPU").fill("2")
    dialog.get_by_label("Idle stop (minutes, 0 never)").fill("0")
    with page.expect_request(lambda r: r.method == "PUT") as put:
        dialog.get_by_role("button", name="Save template").click()
    assert put.value.post_data_json == {"memory": "2Gi", "max_cpu": "2", "idle_minutes": 0}
    row = page.get_by_role("row", name=re.compile("starter"))
    expect(row).to_contain_text("2Gi (max 16Gi)")
    expect(row).to_contain_text("never")
    shot(page, "spaces-templates")

    page.goto(f"{cloud.url}/clusters/{CLUSTER}/new-space")
    page.get_by_label("Space name").fill(SPACE)
    page.get_by_role("button", name=re.compile("^Template")).click()
    page.get_by_role("option").filter(has_text="starter").first.click()
    expect(page.get_by_label("Memory", exact=True)).to_have_attribute("placeholder", "2Gi")
    expect(page.get_by_label("CPU", exact=True)).to_have_accessible_description(
        re.compile("At most 2"))
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith(SPACES)) as req:
        page.get_by_role("button", name="Create space").click()
    assert req.value.post_data_json == {"name": SPACE, "template": "starter"}
    expect(page).to_have_url(re.compile(f"/clusters/{CLUSTER}/spaces/{SPACE}\\?op=op-"))
    _follow(page)
    expect(page.get_by_test_id("space-state")).to_have_text("Running", timeout=30_000)
    expect(page.get_by_test_id("space-resources")).to_have_text("1 CPU, 2Gi")
    expect(page.get_by_test_id("space-template")).to_have_text("starter")
    for mount in ("/home/sagemaker-user", "/data", "/models", "/outputs"):
        expect(page.get_by_role("rowheader", name=mount, exact=True)).to_be_visible()
    shot(page, "spaces-detail-running")
    with cloud.api(cloud_token) as api:
        (pod,) = api.get(f"{SPACES}/{SPACE}").json()["pods"]
    page.get_by_role("button", name="Refresh").last.click()  # the Logs panel's (the last)
    expect(page.get_by_test_id("space-log-line").first).to_contain_text(pod["name"])

    # a job's output, written to the cluster bucket as a job's pod would (under data/)
    _s3(cloud).put_object(Bucket=_bucket(cloud, cloud_token), Key=f"data/{RUN}/metrics.json",
                          Body=b'{"loss": 0.25}\n')
    files = _files(page)
    files.get_by_role("button", name="Refresh").click()
    files.get_by_role("button", name=f"{RUN}/").click()  # a directory opens in the panel
    expect(files.get_by_label("Path")).to_have_value(f"data/{RUN}")
    row = files.get_by_role("row", name=re.compile("^metrics.json "))
    expect(row).to_contain_text("15 B")
    shot(page, "spaces-files-from-a-job")

    # from the notebook to a job: the space's image and a script it saved under /data
    page.get_by_role("button", name="Run a script as a job").click()
    expect(page).to_have_url(re.compile(f"/clusters/{CLUSTER}/submit-job\\?space={SPACE}$"))
    expect(page.get_by_text(f"From dev space {SPACE}")).to_be_visible()
    image = render.IMAGE.format(kind="cpu")
    expect(page.get_by_label("Image")).to_have_value(image)
    expect(page.get_by_label("Command")).to_have_value("python\n/data/")
    page.get_by_label("Job name").fill("from-notebook")
    page.get_by_role("button", name=re.compile("^Instance group")).click()
    page.get_by_role("option").first.click()
    page.get_by_label("Command").fill(f"python\n/data/{RUN}/train.py")
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith("/jobs")) as req:
        page.get_by_role("button", name="Submit job").click()
    body = req.value.post_data_json
    assert body["container"] == {"kind": "PyTorchJob", "image": image, "env": {},
                                 "command": ["python", f"/data/{RUN}/train.py"]}, body
    expect(page.get_by_test_id("progress-status")).to_have_text("succeeded", timeout=60_000)
    shot(page, "spaces-script-as-a-job")
    page.goto(f"{cloud.url}/clusters/{CLUSTER}/spaces/{SPACE}")
    files.get_by_role("button", name=f"{RUN}/").click()   # the panel opens at data/ again
    expect(files.get_by_label("Path")).to_have_value(f"data/{RUN}")

    page.get_by_role("button", name="Stop", exact=True).click()
    page.get_by_role("dialog").get_by_role("button", name="Stop", exact=True).click()
    _follow(page)
    expect(page.get_by_test_id("space-state")).to_have_text("Stopped", timeout=30_000)
    expect(files.get_by_text("start the space to see them")).to_be_visible()
    expect(page.get_by_role("button", name="Stop", exact=True)).to_be_disabled()

    page.get_by_role("button", name="Start", exact=True).click()
    page.get_by_role("dialog").get_by_role("button", name="Start", exact=True).click()
    _follow(page)
    expect(page.get_by_test_id("space-state")).to_have_text("Running", timeout=30_000)
    files.get_by_role("button", name="Refresh").click()
    expect(files.get_by_role("row", name=re.compile("^metrics.json "))).to_be_visible()
    shot(page, "spaces-detail-started-again")

    # JupyterLab opens in a tab of its own, on the space's own host (ADR 0018)
    with page.context.expect_page() as opened:
        page.get_by_role("button", name="Open JupyterLab").click()
    lab = opened.value
    lab.wait_for_load_state()
    expect(lab).to_have_title(re.compile("JupyterLab"))
    assert lab.url.split("/")[2].startswith(f"{SPACE}.") and "podplane_ticket" not in lab.url
    assert [c["name"] for c in page.context.cookies(lab.url)] == ["podplane_space"]
    lab.close()

    page.get_by_role("button", name="Delete", exact=True).click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Also delete its home volume").check()  # offered to an admin only
    expect(dialog.get_by_role("button", name="Delete space and home")).to_be_visible()
    expect(dialog).to_contain_text("Its server and its home volume (20Gi) are deleted.")
    expect(dialog).to_contain_text("The files in its home are lost.")
    shot(page, "spaces-delete-admin")
    dialog.get_by_role("button", name="Cancel").click()
    expect(page.get_by_test_id("space-state")).to_have_text("Running")


def test_viewer_sees_the_space_and_why_changes_are_disabled(page: Page,
                                                           viewer_token: str) -> None:
    sign_in(page, viewer_token, f"/clusters/{CLUSTER}/spaces/{SPACE}")
    expect(page.get_by_test_id("space-state")).to_have_text("Running")
    for name in ("Start", "Stop", "Delete"):
        expect(page.get_by_role("button", name=name, exact=True)).to_be_disabled()
    page.get_by_role("button", name="Delete", exact=True).hover()
    expect(page.get_by_role("tooltip")).to_have_text("Needs the operator role; you are viewer.")
    expect(_files(page).get_by_role("button", name="Refresh")).to_be_disabled()
    shot(page, "spaces-viewer")


def test_an_operator_deletes_the_space_and_its_home_stays(page: Page, cloud: CloudServer,
                                                          cloud_token: str) -> None:
    with cloud.api(cloud_token) as api:
        r = api.post("/api/v1/tokens", json={"name": "ui-operator", "role": "operator"})
        assert r.status_code == 201, r.text
        operator = str(r.json()["token"])
    sign_in(page, operator, f"/clusters/{CLUSTER}/spaces/{SPACE}")
    dialog = page.get_by_role("dialog")
    page.get_by_role("button", name="Delete", exact=True).click()
    expect(dialog).to_contain_text("Its home volume (20Gi) is kept")
    expect(dialog).to_contain_text("Deleting the home volume too needs the admin role.")
    expect(dialog.get_by_label("Also delete its home volume")).to_have_count(0)
    shot(page, "spaces-delete-operator")
    with page.expect_request(lambda r: r.method == "DELETE") as sent:
        dialog.get_by_role("button", name="Delete space").click()
    assert sent.value.url.endswith(f"{SPACES}/{SPACE}")  # no delete_home, no confirm
    expect(page).to_have_url(f"{cloud.url}/clusters/{CLUSTER}/spaces")
    expect(page.get_by_text("No spaces on this cluster yet.")).to_be_visible(timeout=60_000)
    kubeconfig = cloud.home.parent / "cloud" / "sandbox" / "kube" / CLUSTER / "kubeconfig"
    core = k8s.CoreV1Api(k8s_config.new_client_from_config(config_file=str(kubeconfig)))
    claims = [c.metadata.name for c in core.list_namespaced_persistent_volume_claim(
        "default").items]
    assert render.home_claim_name(SPACE) in claims  # the home, for a new space of this name
