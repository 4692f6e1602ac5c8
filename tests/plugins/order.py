"""Longest modules first (ADR 0014): xdist's `loadfile` hands modules out in the order it
gets them, and left to itself it sorts them by their number of tests. The browser, hyp and
crash modules have few tests and run for minutes, so they came last and the run waited on one
worker while the others idled. Sorting by each module's measured wall time (the longest
processing time rule) lets the short ones fill in around them.

The weights are the wall seconds of a recorded whole run (tests/module_walls.json, written
by `make test PYTEST_ARGS=--walls-record` from build/test-measure.json). A module missing
from it weighs what an e2e module or a quick one usually does. Only the order changes: every
test still runs, and a stale file costs time, never coverage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.plugins.budget import whole_suite
from tests.plugins.costs import module_of

WALLS = Path("tests") / "module_walls.json"
UNKNOWN_E2E, UNKNOWN = 20.0, 1.0   # seconds: a new module's guess until it is recorded
RECORD_FLOOR = 2.0   # modules quicker than this are not worth a line in the file


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--walls-record", action="store_true",
                     help=f"write this run's wall seconds per module to {WALLS}")


def walls(root: Path) -> dict[str, float]:
    path = root / WALLS
    return json.loads(path.read_text()) if path.exists() else {}


@pytest.hookimpl(trylast=True)   # after tiers.py marked the e2e tests
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    known = walls(config.rootpath)
    guess: dict[str, float] = {}
    for item in items:
        module = module_of(item.nodeid)
        if module not in known:
            e2e = item.get_closest_marker("e2e") is not None
            guess[module] = max(guess.get(module, UNKNOWN), UNKNOWN_E2E if e2e else UNKNOWN)
    weight = {**guess, **known}
    items.sort(key=lambda item: -weight[module_of(item.nodeid)])   # stable: within a module


def record(root: Path, modules: dict[str, dict[str, float]]) -> None:
    """The whole run's walls, longest first (called by the measure plugin's report)."""
    kept = {m: round(r["wall"], 1) for m, r in sorted(modules.items(), key=lambda kv:
                                                      -kv[1]["wall"])
            if r["wall"] >= RECORD_FLOOR and m.startswith("tests/")}
    (root / WALLS).write_text(json.dumps(kept, indent=1) + "\n")


class Recorder:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        measure = self.config.pluginmanager.get_plugin("podplane-measure")
        if measure is not None and whole_suite(self.config):
            record(self.config.rootpath, measure.report.modules)


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput") and config.getoption("walls_record"):
        config.pluginmanager.register(Recorder(config), "podplane-walls")
