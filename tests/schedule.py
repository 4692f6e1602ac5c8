"""Slowest modules first, so the parallel suite does not end waiting on one of them.

With `--dist loadfile` (`make test`) a module is one unit of work for one xdist worker, and
with `--no-loadscope-reorder` xdist hands the units out in collection order (by default it
sorts them by test count, which puts the slowest modules, that have few tests, last: the other
workers then sit idle while one finishes a 400 s module). This plugin sorts the collection by
each module's measured seconds (tests/module_seconds.txt, setup and teardown included); a module
not listed there counts as quick. Only the order changes: every test still runs.

Refresh the table from a run with `--junitxml=run.xml`: `python -m tests.schedule run.xml`.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

import pytest

TABLE = Path(__file__).with_name("module_seconds.txt")
LISTED_FROM = 10.0  # seconds; quicker modules keep their collection order, after the rest


def module_seconds(table: Path = TABLE) -> dict[str, float]:
    """`tests/x/test_y.py 123` lines (# comments allowed) as {module: seconds}."""
    seconds: dict[str, float] = {}
    if not table.is_file():
        return seconds
    for line in table.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            module, value = line.split()
            seconds[module] = float(value)
    return seconds


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    seconds = module_seconds()
    items.sort(key=lambda item: -seconds.get(item.nodeid.split("::", 1)[0], 0.0))  # stable


def from_junit(path: Path) -> dict[str, float]:
    """Each module's total seconds in a junit XML report (a test case's time includes its
    setup and teardown, so module-scoped fixtures count)."""
    totals: dict[str, float] = defaultdict(float)
    for case in ET.parse(path).iter("testcase"):
        module = case.get("classname", "").split(".")
        while module and not module[-1].startswith("test_"):
            module.pop()  # a test class's name
        if module:
            totals["/".join(module) + ".py"] += float(case.get("time", 0))
    return dict(totals)


def main(report: str) -> None:
    totals = from_junit(Path(report))
    rows = sorted(((s, m) for m, s in totals.items() if s >= LISTED_FROM), reverse=True)
    TABLE.write_text("# module seconds in a parallel run (xdist, 2 cores), slowest first:"
                     " tests/schedule.py\n" + "".join(f"{m} {s:.0f}\n" for s, m in rows))


if __name__ == "__main__":
    main(sys.argv[1])
