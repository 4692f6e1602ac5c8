"""What each test module costs, measured in every run (ADR 0014): CPU seconds (this process and
the children it reaped), wall seconds, sandbox and Kubernetes API starts, cluster creates (through
podplane or made in the sandbox directly) and processes spawned.

Each pytest process (an xdist worker, or the one process of a serial run) measures the modules it
runs; workers send theirs to the controller, which prints the top 30 and writes the whole report
as JSON (`--measure-json`). Starts and creates come from the sandbox's tally file (written by the
sandbox itself, so subprocess sandboxes count too); processes from a counting subprocess.Popen
(asyncio's subprocesses go through it) and os.fork.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from podplane_sandbox.tally import MODULE_ENV, TALLY_ENV
from tests.plugins.costs import COUNTS, Report, module_of, tally_counts

REPORT_KEY = "podplane_measure"
TOP = 30


def cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class Measure:
    """The costs of the modules this process runs."""

    def __init__(self) -> None:
        self.worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        self.report = Report()
        self.module = "<session>"
        self.spawned: Counter[str] = Counter()
        self.kinds: Counter[str] = Counter()
        self.in_popen = 0
        self.folder = Path(tempfile.mkdtemp(prefix="podplane-tally-"))
        self.tally = self.folder / "tally.jsonl"
        self.started_cpu, self.started_wall = cpu_seconds(), time.monotonic()
        os.environ[TALLY_ENV] = str(self.tally)
        self._count_spawns()

    def _count_spawns(self) -> None:
        original = subprocess.Popen.__init__
        measure = self

        def counting(popen: Any, args: Any, *rest: Any, **kw: Any) -> None:
            measure.spawn(args)
            measure.in_popen += 1  # a preexec_fn makes Popen fork through the at-fork hooks
            try:
                original(popen, args, *rest, **kw)
            finally:
                measure.in_popen -= 1

        def forked() -> None:
            if not measure.in_popen:
                measure.spawn(["<fork>"])

        subprocess.Popen.__init__ = counting  # type: ignore[method-assign,assignment]
        os.register_at_fork(after_in_parent=forked)

    def spawn(self, args: Any) -> None:
        self.spawned[self.module] += 1
        self.kinds[process_kind(args)] += 1

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        self.module = module_of(item.nodeid)
        os.environ[MODULE_ENV] = self.module  # children started now carry it to the tally
        cpu, wall, before = cpu_seconds(), time.monotonic(), self.starts()
        yield
        self.report.add(self.module, worker=self.worker, tests=1, cpu=cpu_seconds() - cpu,
                        wall=time.monotonic() - wall)
        if self.starts() != before and item.get_closest_marker("e2e") is None:
            self.report.untiered.append(item.nodeid)

    def starts(self) -> tuple[int, int]:
        """Processes spawned and tally bytes so far: a change means the test started one."""
        size = self.tally.stat().st_size if self.tally.exists() else 0
        return sum(self.spawned.values()), size

    def finish(self) -> Report:
        for module, counts in tally_counts(self.tally).items():
            self.report.add(module, worker=self.worker, **counts)
        for module, n in self.spawned.items():
            self.report.add(module, worker=self.worker, processes=n)
        self.report.workers[self.worker] = {
            "cpu": round(cpu_seconds() - self.started_cpu, 2),
            "wall": round(time.monotonic() - self.started_wall, 2)}
        self.report.process_kinds.update(self.kinds)
        shutil.rmtree(self.folder, ignore_errors=True)
        return self.report


def process_kind(args: Any) -> str:
    """`kubectl`, `python -m podplane serve`, `hyp`...: what a spawn was, for the report."""
    argv = [str(a) for a in args] if isinstance(args, list | tuple) else str(args).split()
    if not argv:
        return "?"
    name = Path(argv[0]).name
    if name.startswith("python") and len(argv) > 2 and argv[1] == "-m":
        return " ".join(["python -m", *argv[2:4]])
    return name


class Collector:
    """On the controller (or a serial run): gathers the reports, prints, writes, and keeps the
    totals for the budget guard."""

    def __init__(self, config: pytest.Config, local: Measure | None) -> None:
        self.config, self.local = config, local
        self.report = Report()

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        raw = getattr(node, "workeroutput", {}).get(REPORT_KEY)
        if raw:
            self.report.merge(Report.from_json(raw))

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.local is not None:
            self.report.merge(self.local.finish())
        path = Path(self.config.getoption("measure_json"))
        if not path.is_absolute():
            path = Path(self.config.rootpath) / path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.report.as_json(), indent=1) + "\n")
        self.written = path

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        tr = terminalreporter
        tr.write_sep("=", f"cost per module (top {TOP} by CPU; all in {self.written})")
        for line in self.report.table(TOP):
            tr.write_line(line)
        totals = self.report.totals()
        tr.write_line("run: " + ", ".join(f"{k} {totals[k]}" for k in ("cpu", *COUNTS)))
        untiered = self.report.untiered
        if untiered:
            tr.write_line(f"{len(untiered)} tests started a sandbox or process without the e2e "
                          f"mark (tests/plugins/tiers.py), e.g. {', '.join(untiered[:5])}")


class WorkerSender:
    def __init__(self, config: pytest.Config, local: Measure) -> None:
        self.config, self.local = config, local

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.config.workeroutput[REPORT_KEY] = self.local.finish().to_json()  # type: ignore[attr-defined]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--measure-json", default="build/test-measure.json",
                     help="where the per-module cost report goes (relative to the rootdir)")


def pytest_configure(config: pytest.Config) -> None:
    worker = hasattr(config, "workerinput")
    controller = not worker and bool(getattr(config.option, "numprocesses", None)) and \
        getattr(config.option, "dist", "no") != "no"
    local = None if controller else Measure()
    if worker:
        assert local is not None
        config.pluginmanager.register(local, "podplane-measure-local")
        config.pluginmanager.register(WorkerSender(config, local), "podplane-measure-sender")
        return
    if local is not None:
        config.pluginmanager.register(local, "podplane-measure-local")
    config.pluginmanager.register(Collector(config, local), "podplane-measure")
