"""Dev spaces in a real browser against a real sandbox: the Spaces page reached from the
cluster page, the New space form filled with the request model's defaults, a bad name and a bad
memory quantity refused in the page (nothing sent), then a good one sent with only the values
that differ from the defaults and refused by the server because dev spaces are off on the
cluster (its hint shown, nothing made); a viewer sees New space disabled with the reason.
Screenshots at 1440x900."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, Request, expect

from tests.browser.cloud import CloudServer, admin_and_cluster, sandbox_and_server
from tests.browser.conftest import Watch, shot, sign_in

CLUSTER = "dev"
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
    # the request model's defaults (domain/spaces/requests.py), read from the OpenAPI document
    for label, value in (("CPU", "1"), ("Memory", "4Gi"), ("GPUs", "0"),
                         ("Home volume (GiB)", "20"), ("Idle stop (minutes)", "60")):
        expect(page.get_by_label(label, exact=True)).to_have_value(value)
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
