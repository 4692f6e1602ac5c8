"""The budget guard (ADR 0014): a whole run (no -k, -m, path or deselection) fails when it
created more clusters, started more sandboxes or spawned more processes than tests/budget.toml
allows. Growth is then a decision: the change that adds the cost raises the number and says
why. A selection is not checked (it runs less than the whole)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.plugins.costs import COUNTS

DEFAULT = Path("tests") / "budget.toml"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--budget", default=None,
                     help=f"the per-run budget file (default: {DEFAULT} under the rootdir)")
    parser.addoption("--budget-record", action="store_true",
                     help="write this whole run's counts to the budget file instead of checking")


def whole_suite(config: pytest.Config) -> bool:
    opt = config.option
    if opt.collectonly or opt.keyword or opt.markexpr or any(getattr(opt, name, None) for name in (
            "deselect", "ignore", "ignore_glob", "lf", "last_failed", "failedfirst")):
        return False
    root = config.rootpath
    tops = {root, *(root / p for p in config.getini("testpaths"))}
    here = config.invocation_params.dir
    return all((here / arg).resolve() in tops for arg in config.args)


def over_budget(totals: dict[str, Any], limits: dict[str, Any]) -> list[str]:
    return [f"{name} {totals[name]} > {limits[name]}" for name in COUNTS
            if name in limits and totals[name] > limits[name]]


BUDGETED = ("podplane_creates", "sandbox_creates", "sandbox_starts", "processes")
# Creates and starts repeat exactly run to run; a few processes (a judge run in a wait loop)
# depend on timing, so their recorded limit leaves room.
PROCESS_MARGIN = 1.1


def recorded(totals: dict[str, Any]) -> str:
    lines = ["# The most one whole run (make test) may create, start and spawn (ADR 0014).",
             "# The run fails above a number: a change that adds such a cost raises it here and",
             "# says why. Recorded with --budget-record from a whole run's counts."]
    for name in BUDGETED:
        value = totals[name]
        if name == "processes":
            value = int(value * PROCESS_MARGIN) + 1
        lines.append(f"{name} = {value}")
    return "\n".join(lines) + "\n"


class Guard:
    def __init__(self, config: pytest.Config, path: Path) -> None:
        self.config, self.path = config, path
        self.verdict = ""

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        measure = self.config.pluginmanager.get_plugin("podplane-measure")
        if measure is None:
            return
        if not whole_suite(self.config):
            self.verdict = f"budget: not checked (a selection ran; {self.path} holds a whole run)"
            return
        totals = measure.report.totals()
        if self.config.getoption("budget_record"):
            self.path.write_text(recorded(totals))
            self.verdict = f"budget: recorded this run's counts in {self.path}"
            return
        limits = tomllib.loads(self.path.read_text())
        over = over_budget(totals, limits)
        if over:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
            self.verdict = (f"BUDGET EXCEEDED: {'; '.join(over)}. If the cost is meant, raise "
                            f"the number in {self.path} in the same change and say why.")
            return
        self.verdict = "budget: within " + str(self.path) + " (" + ", ".join(
            f"{name} {totals[name]}/{limits[name]}" for name in COUNTS if name in limits) + ")"

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.verdict:
            red = self.verdict.startswith("BUDGET")
            terminalreporter.write_line(self.verdict, red=red, bold=red)


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return  # the controller holds the totals
    given = config.getoption("budget")
    path = Path(given) if given else config.rootpath / DEFAULT
    if given or path.exists():
        config.pluginmanager.register(Guard(config, path.resolve()), "podplane-budget")
