"""The end-to-end tier, marked automatically (ADR 0014): a test is `e2e` when it starts a sandbox,
a Kubernetes API, a server, a browser or a subprocess, seen from its fixture closure and the
names its body calls. `make test-fast` runs the rest (`-m "not e2e"`).

The measure plugin checks the marking at run time: a test without the mark that started a
sandbox or a process is listed under "untiered" in the report, so a new kind of start is seen.
"""

from __future__ import annotations

import functools
import inspect
from types import CodeType, FunctionType

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
# Names a test body, or a function of its module it calls (two calls deep), uses to start one.
E2E_CALLS = frozenset({
    "running_stack", "SandboxThread", "Sandbox", "start_box", "start_kube_api", "serving",
    "ControlPlane", "SandboxProcess", "spawn", "subprocess", "Popen", "create_subprocess_exec",
    "fork", "executable", "KUBECTL", "replicas",  # tests/truth: HA replicas on a sandbox
})
DEPTH = 2
# What starts one through a library or another module's attribute, found by the run-time check.
E2E_TESTS = (
    "tests/deploy/test_clean_install.py",  # a clean virtualenv and pip
    "tests/deploy/test_template.py::test_the_sdk_reads_the_credentials_the_host_writes",
    "tests/sandbox_aws/test_cli_process.py::test_up_starts_the_sandbox_as_a_child",
)


def starts_something(item: pytest.Item) -> bool:
    if item.nodeid.startswith(E2E_TESTS):
        return True
    info = getattr(item, "_fixtureinfo", None)
    for name in getattr(item, "fixturenames", ()):
        if name not in E2E_FIXTURES:
            continue
        defs = info.name2fixturedefs.get(name) if info else None
        where = defs[-1].func.__module__ if defs else ""
        if (name, where) not in NOT_E2E:
            return True
    function = getattr(item, "function", None)
    return isinstance(function, FunctionType) and not E2E_CALLS.isdisjoint(
        names_used(function, DEPTH))


@functools.cache
def names_used(function: FunctionType, depth: int) -> frozenset[str]:
    """The global and attribute names `function` uses, with those of the plain functions it
    names, `depth` calls deep (a test that starts a sandbox through its module's helper)."""
    names = _code_names(function.__code__)
    if depth > 0:
        for name in list(names):
            called = function.__globals__.get(name)
            if inspect.isfunction(called):
                names |= names_used(called, depth - 1)
    return frozenset(names)


def _code_names(code: CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:  # inner functions and lambdas
        if isinstance(const, CodeType):
            names |= _code_names(const)
    return names


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "e2e: starts a sandbox, server, browser or subprocess (set automatically)")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if starts_something(item):
            item.add_marker(pytest.mark.e2e)
