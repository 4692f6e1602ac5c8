"""The sandbox counts its own starts and creates for the test run's measure (ADR 0014): a line
per start and per cluster create, marked as podplane's when it carries podplane's tag, so
subprocess sandboxes count as well as in-process ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from podplane_sandbox.tally import MANAGED_TAG, MODULE_ENV, TALLY_ENV
from tests.plugins.costs import tally_counts
from tests.sandbox_aws.conftest import ROLE, network, second_subnet, start_box


def test_the_sandbox_tallies_its_start_and_each_create(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    tally = tmp_path / "tally.jsonl"
    monkeypatch.setenv(TALLY_ENV, str(tally))
    monkeypatch.setenv(MODULE_ENV, "tests/x/test_m.py")
    box = start_box(tmp_path / "box")
    try:
        eks = box.client("eks")
        vpc = {"subnetIds": [network(box)[0], second_subnet(box)]}
        eks.create_cluster(name="ours", roleArn=ROLE, resourcesVpcConfig=vpc,
                           tags={MANAGED_TAG: "true"})
        eks.create_cluster(name="theirs", roleArn=ROLE, resourcesVpcConfig=vpc)
        with pytest.raises(ClientError):  # refused: nothing made, nothing counted
            eks.create_cluster(name="ours", roleArn=ROLE, resourcesVpcConfig=vpc)
    finally:
        box.sandbox.stop()
    lines = [json.loads(line) for line in tally.read_text().splitlines()]
    assert [(e["event"], e.get("managed"), e["module"]) for e in lines] == [
        ("sandbox_start", None, "tests/x/test_m.py"),
        ("eks_create", True, "tests/x/test_m.py"),
        ("eks_create", False, "tests/x/test_m.py")]
    assert tally_counts(tally) == {"tests/x/test_m.py": {
        "sandbox_starts": 1, "podplane_creates": 1, "sandbox_creates": 1}}


def test_without_the_variable_nothing_is_written(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from podplane_sandbox.tally import note

    monkeypatch.delenv(TALLY_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    note("sandbox_start")
    assert list(tmp_path.iterdir()) == []
