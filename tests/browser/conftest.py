"""A real `podplane serve` in a subprocess and Debian's Chromium driven by Playwright.

Every page a test opens is watched: console errors and requests to any other origin fail the
test. Screenshots go to artifacts/screenshots/ (kept out of git).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import (
    Browser,
    ConsoleMessage,
    Page,
    Playwright,
    Response,
    expect,
    sync_playwright,
)

from tests.served import REPO, ControlPlane

CONSOLE_INDEX = REPO / "src" / "podplane" / "web" / "static" / "console" / "index.html"
SCREENSHOTS = REPO / "artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]
DESKTOP = {"width": 1440, "height": 900}
MakeToken = Callable[[str, str], str]


class Server(ControlPlane):
    """`python -m podplane serve` in a subprocess (tests/served.py), on the default SQLite
    database of its own PODPLANE_HOME, with the test kit: its workflow (test.touch) gives the
    Operations page operations."""

    def __init__(self, home: Path, **env: str) -> None:
        super().__init__(home, {"PODPLANE_TEST_WORKFLOWS": "1", **env})

    @property
    def env(self) -> dict[str, str]:
        env = super().env
        env.pop("PODPLANE_DATABASE_URL", None)
        return env


def running_server(home: Path) -> Iterator[Server]:
    if not CONSOLE_INDEX.is_file():
        raise RuntimeError(f"The console is not built ({CONSOLE_INDEX} missing): make console")
    srv = Server(home=home)
    try:
        srv.start()
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from running_server(tmp_path_factory.mktemp("podplane-home"))


@pytest.fixture(scope="session")
def admin_token(server: Server) -> str:
    """Made with the CLI, as an operator would make the first one."""
    return server.token("ui-admin", "admin")


@pytest.fixture(scope="session")
def make_token(server: Server, admin_token: str) -> MakeToken:
    """More tokens, through the REST API (quicker than a CLI process each)."""

    def make(name: str, role: str) -> str:
        with server.api(admin_token) as api:
            r = api.post("/api/v1/tokens", json={"name": name, "role": role})
            assert r.status_code == 201, r.text
            return str(r.json()["token"])

    return make


# Playwright's sync API keeps an event loop running while it is open, which pytest-asyncio's
# tests cannot share: it lives for one test module, so async tests elsewhere run in between.
@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        raise RuntimeError("Debian's chromium is missing: apt-get install -y chromium")
    b = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
    yield b
    b.close()


@dataclass
class Watch:
    """What a page did that a test must not allow: console errors and foreign requests."""

    origin: str
    errors: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    allowed_errors: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # "401 GET /api/v1/...", to explain errors

    def on_console(self, msg: ConsoleMessage) -> None:
        if msg.type == "error":
            self.errors.append(msg.text)

    def on_url(self, url: str) -> None:
        if url.startswith("data:"):
            return
        own = (self.origin + "/", self.origin.replace("http", "ws", 1) + "/")
        if not url.startswith(own):
            self.foreign.append(url)

    def on_response(self, response: Response) -> None:
        if response.status >= 400:
            self.failed.append(f"{response.status} {response.request.method} {response.url}")

    def allow_error(self, fragment: str) -> None:
        """An error the test provokes on purpose (a 401 for a wrong token, say)."""
        self.allowed_errors.append(fragment)

    def unexpected_errors(self) -> list[str]:
        return [e for e in self.errors if not any(a in e for a in self.allowed_errors)]


@pytest.fixture
def site(server: Server) -> Server:
    """The server the page fixture points at; a test may override it with its own server."""
    return server


@pytest.fixture
def watch(site: Server) -> Watch:
    return Watch(origin=site.url)


@pytest.fixture
def page(browser: Browser, site: Server, watch: Watch) -> Iterator[Page]:
    # Reduced motion: Cloudscape then skips its fades, so screenshots show settled pages.
    context = browser.new_context(base_url=site.url, viewport=DESKTOP, reduced_motion="reduce")
    p = context.new_page()
    p.set_default_timeout(15_000)
    # Assertions get the same budget as actions: a page waiting on a server that shares two
    # cores with the other test workers may take more than expect's default 5 s to render.
    expect.set_options(timeout=15_000)
    p.on("console", watch.on_console)
    p.on("pageerror", lambda err: watch.errors.append(f"pageerror: {err}"))
    p.on("request", lambda req: watch.on_url(req.url))
    p.on("websocket", lambda ws: watch.on_url(ws.url))
    p.on("response", watch.on_response)
    yield p
    context.close()
    assert not watch.unexpected_errors(), (
        f"console errors: {watch.unexpected_errors()}; failed responses: {watch.failed}")
    assert not watch.foreign, f"requests to other origins: {watch.foreign}"


def shot(page: Page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False, animations="disabled")
    return path


def sign_in(page: Page, token: str, path: str = "/") -> None:
    page.goto(path)
    page.get_by_label("API token").fill(token)
    page.get_by_role("button", name="Sign in").click()
    page.locator("#pp-top").wait_for()
