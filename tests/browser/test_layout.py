"""Every page is usable at 1440x900 and at 1024 wide: nothing overflows sideways."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Server, shot, sign_in
from tests.browser.test_operations import _start, _wait_terminal

PAGES = ["operations", "operation", "audit", "tokens"]


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
