"""The end-to-end tier, marked automatically (ADR 0014): a test is `e2e` when it starts a sandbox,
a Kubernetes API, a server, a browser or a subprocess, seen from its fixture closure and the
names its body calls. `make test-fast` runs the rest (`-m "not e2e"`).

The measure plugin checks the marking at run time: a test without the mark that started a
sandbox or a process is listed under "untiered" in the report, so a new kind of start is seen.
"""

from __future__ import annotations

import pytest

# Fixtures that start a sandbox (in-process or `podplane sandbox`), a Kubernetes API, a control
# plane process, a real HTTP server, a browser, or a judge's process (hyp, kubectl).
E2E_FIXTURES = frozenset({
    "stack", "box", "account", "cluster", "podplane_cluster", "sandbox", "cloud", "page",
    "browser", "playwright", "server", "site", "served", "procs", "world", "pair", "cp",
    "alpha", "feature_cluster", "hyp", "hyp_on", "fuzz_world",
})
# Same name, no start: the in-memory fake of tests/ops (FakeCloud).
NOT_E2E = frozenset({("cloud", "tests.ops.conftest")})
# Names a test body calls to start one itself.
E2E_CALLS = frozenset({
    "running_stack", "SandboxThread", "Sandbox", "start_box", "start_kube_api", "serving",
    "ControlPlane", "SandboxProcess", "spawn", "subprocess", "run_cli", "KUBECTL",
})


def starts_something(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    for name in getattr(item, "fixturenames", ()):
        if name not in E2E_FIXTURES:
            continue
        defs = info.name2fixturedefs.get(name) if info else None
        where = defs[-1].func.__module__ if defs else ""
        if (name, where) not in NOT_E2E:
            return True
    code = getattr(getattr(item, "function", None), "__code__", None)
    return code is not None and not E2E_CALLS.isdisjoint(code.co_names)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "e2e: starts a sandbox, server, browser or subprocess (set automatically)")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if starts_something(item):
            item.add_marker(pytest.mark.e2e)
