"""The budget guard (tests/plugins/budget.py, ADR 0014) on a tiny suite of its own, run by
pytest in a subprocess: a whole run that creates one cluster more than its budget allows fails
and names the count and the file; a selection is not held to the whole run's budget."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.plugins.budget import over_budget, recorded
from tests.plugins.costs import Report
from tests.plugins.measure import process_kind

REPO = Path(__file__).resolve().parents[2]
SUITE = '''
from podplane_sandbox.tally import note


def test_creates_a_cluster_through_podplane():
    note("eks_create", managed=True)  # what the sandbox writes when podplane creates one


def test_starts_processes():
    import os
    import subprocess
    subprocess.run(["true"], check=True)
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
'''


def run_suite(tmp: Path, budget: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    (tmp / "conftest.py").write_text('pytest_plugins = ["tests.plugins.measure", '
                                     '"tests.plugins.tiers", "tests.plugins.budget"]\n')
    (tmp / "test_suite.py").write_text(SUITE)
    (tmp / "budget.toml").write_text(budget)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--budget", "budget.toml", *args], cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.e2e  # a pytest subprocess
def test_a_whole_run_over_its_budget_fails_naming_the_count_and_the_file(tmp_path: Path) -> None:
    done = run_suite(tmp_path, "podplane_creates = 0\nprocesses = 5\n")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "2 passed" in done.stdout and "processes 2" in done.stdout
    assert f"BUDGET EXCEEDED: podplane_creates 1 > 0. If the cost is meant, raise the number " \
           f"in {tmp_path / 'budget.toml'}" in done.stdout
    report = json.loads((tmp_path / "build" / "test-measure.json").read_text())
    assert report["totals"]["podplane_creates"] == 1
    assert report["modules"]["test_suite.py"]["processes"] == 2
    assert report["process_kinds"] == {"true": 1, "<fork>": 1}


@pytest.mark.e2e
def test_a_selection_is_not_held_to_the_whole_runs_budget(tmp_path: Path) -> None:
    done = run_suite(tmp_path, "podplane_creates = 0\n", "-m", "not e2e")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 1 deselected" in done.stdout  # the test that spawns is e2e
    assert "budget: not checked (a selection ran" in done.stdout


def test_over_budget_names_only_what_grew() -> None:
    totals = {"podplane_creates": 3, "sandbox_creates": 9, "sandbox_starts": 2,
              "kube_starts": 0, "hyperpod_creates": 0, "processes": 10}
    assert over_budget(totals, {"podplane_creates": 3, "sandbox_creates": 8}) == [
        "sandbox_creates 9 > 8"]


def test_a_recorded_budget_is_the_runs_counts_with_room_for_processes() -> None:
    report = Report()
    report.add("tests/a.py", "gw0", podplane_creates=2, sandbox_starts=4, processes=100)
    text = recorded(report.totals())
    assert "podplane_creates = 2\n" in text and "sandbox_starts = 4\n" in text
    assert "processes = 111\n" in text and "sandbox_creates = 0\n" in text


@pytest.mark.parametrize(("args", "kind"), [
    (["/usr/bin/python3", "-m", "podplane", "serve", "--port", "1"], "python -m podplane serve"),
    (["/x/.venv/bin/kubectl", "get", "nodes"], "kubectl"), ("git status", "git")])
def test_process_kinds_name_the_program(args: object, kind: str) -> None:
    assert process_kind(args) == kind
