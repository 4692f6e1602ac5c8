"""Golden worlds (tests/golden.py): built once per run, and every copy is private: what one
test changes in its copy is in no other copy and not in the golden; a copy resumes the golden's
virtual clock and gets tokens of its own."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.golden import golden, restored_stack
from tests.groups.conftest import CLUSTER, build_imported
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")


def _digest(folder: Path) -> str:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()


async def test_a_golden_is_built_once_per_run(tmp_path_factory: pytest.TempPathFactory) -> None:
    built: list[str] = []

    async def probe(stack: Stack) -> dict[str, Any]:
        built.append(stack.aws_url)
        stack.advance(42)
        return {"probe": len(built)}

    first = await golden(tmp_path_factory, "probe", probe)
    again = await golden(tmp_path_factory, "probe", probe)
    assert first == again and len(built) == 1
    assert json.loads((first / "golden.json").read_text()) == {"probe": 1}


async def test_a_copy_is_private_and_resumes_the_golden(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = await golden(tmp_path_factory, "imported", build_imported)
    before = _digest(folder)
    saved_now = json.loads((folder / "cloud" / "sandbox" / "aws-state.json").read_text())["now"]
    async with restored_stack(tmp_path / "a", tmp_path_factory, "imported",
                              build_imported) as a:
        assert a.sandbox.box.world.now() == saved_now  # the clock resumes where it stopped
        assert a.aws("sagemaker").describe_cluster(ClusterName=CLUSTER)[
            "ClusterStatus"] == "InService"
        a.aws("ec2").create_vpc(CidrBlock="10.9.0.0/16", TagSpecifications=[{
            "ResourceType": "vpc", "Tags": [{"Key": "copy", "Value": "a"}]}])
        async with a.client("admin") as api:  # the copy's own token, next to the golden's
            names = {t["name"] for t in (await api.get("/api/v1/tokens")).json()}
        assert {"stack-admin", "golden-admin"} <= names
        a.advance(60)
    async with restored_stack(tmp_path / "b", tmp_path_factory, "imported",
                              build_imported) as b:
        assert b.sandbox.box.world.now() == saved_now
        tagged = b.aws("ec2").describe_vpcs(Filters=[{"Name": "tag:copy", "Values": ["a"]}])
        assert tagged["Vpcs"] == []  # a's change is not in b
    assert _digest(folder) == before  # nor in the golden
