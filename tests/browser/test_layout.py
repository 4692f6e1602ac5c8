"""Every page is usable at 1440x900 and at 1024 wide: nothing overflows sideways."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import REPO, Server, shot, sign_in
from tests.browser.test_operations import _start, _wait_terminal

PAGES = ["operations", "operation", "audit", "tokens"]
SIZES = REPO / "artifacts" / "console-sizes.json"


def _overflow(page: Page) -> int:
    """How many pixels the page is wider than the window (0 when it fits)."""
    return int(page.evaluate("document.documentElement.scrollWidth - window.innerWidth"))


@pytest.mark.parametrize("width,height", [(1440, 900), (1024, 768)])
def test_pages_fit_the_window(page: Page, admin_token: str, server: Server,
                              width: int, height: int) -> None:
    op = _start(server, admin_token, f"res-layout-{width}", fail="denied:1")
    _wait_terminal(server, admin_token, op["id"])
    page.set_viewport_size({"width": width, "height": height})
    sign_in(page, admin_token, "/operations")
    paths = {"operations": "/operations", "operation": f"/operations/{op['id']}",
             "audit": "/audit", "tokens": "/tokens"}
    for name in PAGES:
        page.goto(paths[name])
        expect(page.locator("main h1").first).to_be_visible()
        page.wait_for_load_state("networkidle")
        shot(page, f"layout-{width}-{name}")
        assert _overflow(page) <= 0, f"{name} overflows by {_overflow(page)}px at {width} wide"


def test_not_found_page_offers_a_way_home(page: Page, admin_token: str) -> None:
    sign_in(page, admin_token, "/operations/x/y")
    expect(page.get_by_text("Page not found")).to_be_visible()
    page.get_by_role("button", name="Go to the console home").click()
    expect(page.get_by_role("heading", name="Operations", exact=True)).to_be_visible()


def _asset_bytes(page: Page, path: str) -> dict[str, int]:
    """Bytes on the wire (gzip) of every script, stylesheet and font the page loads for `path`."""
    sizes: dict[str, int] = {}

    def record(request) -> None:  # type: ignore[no-untyped-def]
        if request.url.endswith((".js", ".css", ".woff2")):
            sizes[request.url.rsplit("/", 1)[-1]] = request.sizes()["responseBodySize"]

    page.on("requestfinished", record)
    page.goto(path)
    page.wait_for_load_state("networkidle")
    page.remove_listener("requestfinished", record)
    return sizes


def test_first_page_javascript_stays_small(page: Page, admin_token: str, browser,  # type: ignore[no-untyped-def]
                                           server: Server) -> None:
    signed_out = _asset_bytes(page, "/")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    entry = [n for n in signed_out if n.startswith("index-") and n.endswith(".js")]
    assert len(entry) == 1, signed_out
    sign_in(page, admin_token, "/operations")

    # A fresh cache, the same session: what a signed-in user downloads to see Operations.
    fresh = browser.new_context(base_url=server.url, viewport={"width": 1440, "height": 900})
    try:
        fresh.add_cookies(page.context.cookies())
        signed_in = _asset_bytes(fresh.new_page(), "/operations")
    finally:
        fresh.close()
    def total(sizes: dict[str, int], ext: str) -> int:
        return sum(v for k, v in sizes.items() if k.endswith(ext))

    report = {
        "entry_gzip": signed_out[entry[0]],
        "sign_in_page_js_gzip": total(signed_out, ".js"),
        "operations_page_js_gzip": total(signed_in, ".js"),
        "operations_page_scripts": len([k for k in signed_in if k.endswith(".js")]),
        "operations_page_css_gzip": total(signed_in, ".css"),
        "operations_page_fonts": total(signed_in, ".woff2"),
        "operations_page_font_files": len([k for k in signed_in if k.endswith(".woff2")]),
    }
    SIZES.parent.mkdir(parents=True, exist_ok=True)
    SIZES.write_text(json.dumps(report, indent=1) + "\n")
    # Budgets with some headroom over what the build weighs today (docs/console.md).
    assert report["entry_gzip"] < 100_000, report
    assert report["sign_in_page_js_gzip"] < 250_000, report
    assert report["operations_page_js_gzip"] < 350_000, report
