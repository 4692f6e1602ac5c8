"""The run hands modules out longest first (tests/plugins/order.py): recorded walls decide,
an unrecorded e2e module is guessed long and a quick one short, and tests keep their order
within their module."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.plugins import order


@dataclass
class Item:
    nodeid: str
    e2e: bool = False

    def get_closest_marker(self, name: str) -> Any:
        return object() if self.e2e and name == "e2e" else None


@dataclass
class Config:
    rootpath: Path


def test_longest_recorded_first_then_guesses_and_tests_keep_their_order(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / order.WALLS).write_text(json.dumps({"tests/b.py": 300.0, "tests/c.py": 5.0}))
    items = [Item("tests/a.py::one"), Item("tests/c.py::x"), Item("tests/b.py::first"),
             Item("tests/new_e2e.py::t", e2e=True), Item("tests/b.py::second"),
             Item("tests/a.py::two")]
    order.pytest_collection_modifyitems(Config(tmp_path), items)  # type: ignore[arg-type]
    assert [i.nodeid for i in items] == [
        "tests/b.py::first", "tests/b.py::second", "tests/new_e2e.py::t", "tests/c.py::x",
        "tests/a.py::one", "tests/a.py::two"]


def test_a_record_keeps_the_modules_worth_a_line_longest_first(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    order.record(tmp_path, {"tests/a.py": {"wall": 3.04}, "tests/b.py": {"wall": 90.0},
                            "tests/quick.py": {"wall": 0.5}, "<session>": {"wall": 50.0}})
    written = json.loads((tmp_path / order.WALLS).read_text())
    assert list(written.items()) == [("tests/b.py", 90.0), ("tests/a.py", 3.0)]
