"""The operation page survives a restart of the control plane: it keeps the last state, says
it is reconnecting, and goes live again on the restarted server, which resumed the operation
without repeating its cloud call."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Server, Watch, running_server, shot, sign_in
from tests.browser.test_operations import _start


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Server]:
    """A server of this test's own, since the test stops and starts it."""
    yield from running_server(tmp_path / "home")


def _touches(site: Server, name: str) -> int:
    ledger = site.home / "fake-cloud.jsonl"
    lines = ledger.read_text().splitlines() if ledger.exists() else []
    return sum(1 for line in lines if json.loads(line)["name"] == name)


def test_operation_page_survives_a_server_restart(page: Page, site: Server, watch: Watch) -> None:
    # While the server is down the browser reports the refused connections itself.
    watch.allow_error("ERR_CONNECTION_REFUSED")
    watch.allow_error("WebSocket connection to")
    admin = site.token("restart-admin", "admin")
    op = _start(site, admin, "res-restart", delay=3600, poll=1)
    sign_in(page, admin, f"/operations/{op['id']}")
    expect(page.get_by_text("Live", exact=True)).to_be_visible()
    touch = page.get_by_role("row").filter(has_text="touch").first
    expect(touch).to_contain_text("running")

    site.stop()
    expect(page.get_by_text("Reconnecting to the control plane")).to_be_visible()
    expect(touch).to_contain_text("running")  # the last state read stays on screen
    shot(page, "13-operation-reconnecting")

    site.start()
    expect(page.get_by_text("Live", exact=True)).to_be_visible(timeout=30_000)
    expect(page.get_by_text("Reconnecting to the control plane")).to_have_count(0)
    expect(touch).to_contain_text("running")
    assert _touches(site, "res-restart") == 1  # resumed by inspecting, not by calling again

    page.get_by_role("button", name="Cancel operation").click()
    page.get_by_role("dialog").get_by_role("button", name="Cancel operation").click()
    expect(page.get_by_test_id("op-status")).to_contain_text("cancelled", timeout=20_000)
