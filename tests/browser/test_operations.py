"""The Operations pages against the real engine: a failed step retried from the UI, a running
operation followed live over the WebSocket, through a reload, and cancelled."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Page, expect

from tests.browser.conftest import MakeToken, Server, Watch, shot, sign_in


def _start(server: Server, token: str, name: str, **params: Any) -> dict[str, Any]:
    """Start the engine's test workflow (prepare -> touch -> verify) through the REST API."""
    with server.api(token) as api:
        body = {"target": name, "params": {"name": name, **params}}
        r = api.post("/api/v1/operations/_test", json=body)
        assert r.status_code == 202, r.text
        return dict(r.json())


def _wait_terminal(server: Server, token: str, op_id: str) -> dict[str, Any]:
    with server.api(token) as api:
        for _ in range(10):
            op = api.get(f"/api/v1/operations/{op_id}/wait", params={"timeout": 10}).json()
            if op["status"] in ("succeeded", "failed", "cancelled"):
                return dict(op)
    raise AssertionError(f"operation {op_id} did not finish")


def test_failed_step_is_retried_from_the_ui(page: Page, admin_token: str, server: Server) -> None:
    op = _start(server, admin_token, "res-fail", fail="denied:1")
    assert _wait_terminal(server, admin_token, op["id"])["status"] == "failed"

    sign_in(page, admin_token, "/operations")
    row = page.get_by_role("row").filter(has_text=op["id"])
    expect(row).to_contain_text("failed")
    expect(row).to_contain_text("res-fail")
    expect(row).to_contain_text("touch")
    shot(page, "07-operations")

    page.get_by_role("button", name="Filter by status").click()
    page.get_by_role("option", name="succeeded").click()
    expect(page).to_have_url(re.compile(r"status=succeeded"))
    expect(page.get_by_role("row").filter(has_text=op["id"])).to_have_count(0)
    page.get_by_role("button", name="Filter by status").click()
    page.get_by_role("option", name="failed").click()
    expect(page.get_by_role("row").filter(has_text=op["id"])).to_be_visible()

    page.get_by_role("link", name=op["id"]).click()
    expect(page).to_have_url(re.compile(f"/operations/{op['id']}$"))
    touch = page.get_by_role("row").filter(has_text="touch").first
    expect(touch).to_contain_text("failed")
    expect(touch).to_contain_text("AccessDenied")
    expect(touch).to_contain_text("Grant the permission, then retry the step.")
    prepare = page.get_by_role("row").filter(has_text="prepare").first
    expect(prepare).to_contain_text("succeeded")
    shot(page, "08-operation-failed")

    page.get_by_role("button", name="Retry step touch").click()
    summary = page.get_by_test_id("op-status")
    expect(summary).to_contain_text("succeeded", timeout=20_000)
    for step in ("prepare", "touch", "verify"):
        expect(page.get_by_role("row").filter(has_text=step).first).to_contain_text("succeeded")
    expect(page.get_by_role("button", name="Retry step touch")).to_have_count(0)
    shot(page, "09-operation-retried")

    page.goto("/audit?action=operation.retry_step")
    entry = page.get_by_role("row").filter(has_text=f"operation/{op['id']}/touch")
    expect(entry).to_contain_text("ui-admin")
    expect(entry).to_contain_text("via ui")
    expect(entry).to_contain_text("ok")


def test_running_operation_is_live_survives_reload_and_cancels(
    page: Page, admin_token: str, server: Server, watch: Watch
) -> None:
    op = _start(server, admin_token, "res-slow", delay=3600, poll=1)
    sockets: list[str] = []
    page.on("websocket", lambda ws: sockets.append(ws.url))

    sign_in(page, admin_token, f"/operations/{op['id']}")
    expect(page.get_by_text("Live")).to_be_visible()
    touch = page.get_by_role("row").filter(has_text="touch").first
    expect(touch).to_contain_text("running")
    assert any(url.endswith(f"/api/v1/operations/{op['id']}/events") for url in sockets)
    shot(page, "10-operation-running")

    page.reload()  # the page is rebuilt from the server's record of the operation
    expect(page.get_by_text("Live")).to_be_visible()
    expect(page.get_by_role("row").filter(has_text="touch").first).to_contain_text("running")

    page.get_by_role("button", name="Cancel operation").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("not undone")
    shot(page, "11-cancel-confirmation")
    dialog.get_by_role("button", name="Cancel operation").click()
    summary = page.get_by_test_id("op-status")
    expect(summary).to_contain_text("cancelled", timeout=20_000)
    expect(page.get_by_role("button", name="Retry step touch")).to_be_visible()


def test_viewer_sees_why_retry_and_cancel_are_disabled(
    page: Page, admin_token: str, server: Server, make_token: MakeToken
) -> None:
    op = _start(server, admin_token, "res-viewer", fail="denied:1")
    _wait_terminal(server, admin_token, op["id"])
    sign_in(page, make_token("watcher", "viewer"), f"/operations/{op['id']}")
    retry = page.get_by_role("button", name="Retry step touch")
    expect(retry).to_be_disabled()
    retry.hover()
    expect(page.get_by_role("tooltip")).to_have_text("Needs the operator role; you are viewer.")
    shot(page, "12-operation-as-viewer")
