"""FSx for Lustre storage capacity increases in the sandbox (sandbox/.../aws/fsx_resize.py), as
the botocore `fsx` model and the FSx for Lustre User Guide ("Managing storage capacity")
state them: a decrease, an equal value, a value that is not a multiple of 2400 GiB and a
SCRATCH_1 increase are refused and change nothing; an accepted increase shows
FILE_SYSTEM_UPDATE IN_PROGRESS (Lifecycle UPDATING), then the new capacity with
STORAGE_OPTIMIZATION progress on the virtual clock, then COMPLETED; a second increase while
one runs, or within 6 hours of the last request, is refused; a retry with the same
ClientRequestToken is the same request."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from podplane_sandbox.aws.fsx import CREATE_SECONDS
from podplane_sandbox.aws.fsx_resize import (
    OPTIMIZE_SECONDS_PER_STEP,
    SCALE_SECONDS,
    SPACING_SECONDS,
)
from tests.sandbox_aws.conftest import Box, network, start_box


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Box]:
    b = start_box(tmp_path_factory.mktemp("fsx-resize"))
    yield b
    b.sandbox.stop()
    assert b.shapes.errors == [], b.shapes.errors


@pytest.fixture(scope="module")
def made(box: Box) -> dict[str, str]:
    subnet, sg = network(box)
    box.client("ec2").authorize_security_group_ingress(GroupId=sg, IpPermissions=[{
        "IpProtocol": "tcp", "FromPort": 988, "ToPort": 988,
        "UserIdGroupPairs": [{"GroupId": sg}]}])
    fsx = box.client("fsx")
    out = {}
    for deployment, extra in (("PERSISTENT_2", {"PerUnitStorageThroughput": 125}),
                              ("SCRATCH_1", {})):
        out[deployment] = fsx.create_file_system(
            FileSystemType="LUSTRE", StorageCapacity=2400 if extra else 1200,
            SubnetIds=[subnet], SecurityGroupIds=[sg],
            LustreConfiguration={"DeploymentType": deployment, **extra}
        )["FileSystem"]["FileSystemId"]
    box.advance(CREATE_SECONDS + 1)
    return out


def _fs(box: Box, fs_id: str) -> dict[str, Any]:
    return dict(box.client("fsx").describe_file_systems(FileSystemIds=[fs_id])["FileSystems"][0])


def _refused(box: Box, fs_id: str, capacity: int) -> str:
    before = (_fs(box, fs_id), len(box.ledger(service="fsx")))
    with pytest.raises(ClientError) as err:
        box.client("fsx").update_file_system(FileSystemId=fs_id, StorageCapacity=capacity)
    assert (_fs(box, fs_id), len(box.ledger(service="fsx"))) == before
    assert err.value.response["Error"]["Code"] == "BadRequest"
    return str(err.value.response["Error"]["Message"])


def test_what_fsx_refuses(box: Box, made: dict[str, str]) -> None:
    fs_id = made["PERSISTENT_2"]
    assert "only be increased" in _refused(box, fs_id, 1200)
    assert "greater than the current" in _refused(box, fs_id, 2400)
    assert "multiple of 2400" in _refused(box, fs_id, 3600)
    assert "SCRATCH_1" in _refused(box, made["SCRATCH_1"], 2400)


def test_an_increase_shows_its_progress_then_completes(box: Box, made: dict[str, str]) -> None:
    fsx, fs_id = box.client("fsx"), made["PERSISTENT_2"]
    fsx.update_file_system(FileSystemId=fs_id, StorageCapacity=7200, ClientRequestToken="t1")
    fsx.update_file_system(FileSystemId=fs_id, StorageCapacity=7200, ClientRequestToken="t1")
    assert len(box.ledger(service="fsx", action="UpdateFileSystem")) == 1   # one request
    fs = _fs(box, fs_id)
    (update,) = fs["AdministrativeActions"]
    assert (fs["Lifecycle"], fs["StorageCapacity"]) == ("UPDATING", 2400)
    assert (update["AdministrativeActionType"], update["Status"]) == (
        "FILE_SYSTEM_UPDATE", "IN_PROGRESS")
    assert update["TargetFileSystemValues"]["StorageCapacity"] == 7200
    assert "in progress" in _refused(box, fs_id, 9600)

    box.advance(SCALE_SECONDS + OPTIMIZE_SECONDS_PER_STEP)   # servers added, half optimized
    fs = _fs(box, fs_id)
    actions = {a["AdministrativeActionType"]: a for a in fs["AdministrativeActions"]}
    assert (fs["Lifecycle"], fs["StorageCapacity"]) == ("AVAILABLE", 7200)
    assert actions["FILE_SYSTEM_UPDATE"]["Status"] == "UPDATED_OPTIMIZING"
    assert actions["STORAGE_OPTIMIZATION"]["Status"] == "IN_PROGRESS"
    assert 40 <= actions["STORAGE_OPTIMIZATION"]["ProgressPercent"] <= 60
    assert "in progress" in _refused(box, fs_id, 9600)

    box.advance(OPTIMIZE_SECONDS_PER_STEP + 1)
    actions = {a["AdministrativeActionType"]: a for a in _fs(box, fs_id)["AdministrativeActions"]}
    assert actions["FILE_SYSTEM_UPDATE"]["Status"] == "COMPLETED"
    assert (actions["STORAGE_OPTIMIZATION"]["Status"],
            actions["STORAGE_OPTIMIZATION"]["ProgressPercent"]) == ("COMPLETED", 100)
    assert "6 hours" in _refused(box, fs_id, 9600)
    box.advance(SPACING_SECONDS)
    fsx.update_file_system(FileSystemId=fs_id, StorageCapacity=9600)
    assert _fs(box, fs_id)["Lifecycle"] == "UPDATING"
