"""FSx for Lustre in the sandbox, as AWS documents it (sandbox/.../aws/fsx.py): a security
group without TCP 988 from itself is refused with the LNET message; capacity and throughput
outside the botocore model's values are refused; a file system is CREATING, then AVAILABLE
with a DNS name and mount name; a delete is DELETING, then the file system is gone. Refusals
change nothing (no file system, no ledger entry)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from podplane_sandbox.aws.fsx import CREATE_SECONDS, DELETE_SECONDS
from tests.sandbox_aws.conftest import Box, network, start_box


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Box]:
    b = start_box(tmp_path_factory.mktemp("fsx"))
    yield b
    b.sandbox.stop()
    assert b.shapes.errors == [], b.shapes.errors   # every answer matched botocore's shapes


@pytest.fixture(scope="module")
def place(box: Box) -> tuple[str, str]:
    return network(box)


def _lustre(subnet: str, sg: str, capacity: int = 1200, throughput: int = 125
            ) -> dict[str, Any]:
    return {"FileSystemType": "LUSTRE", "StorageCapacity": capacity, "SubnetIds": [subnet],
            "SecurityGroupIds": [sg],
            "LustreConfiguration": {"DeploymentType": "PERSISTENT_2",
                                    "PerUnitStorageThroughput": throughput}}


def _refused(box: Box, params: dict[str, Any]) -> dict[str, Any]:
    fsx = box.client("fsx")
    before = (len(fsx.describe_file_systems()["FileSystems"]), len(box.ledger(service="fsx")))
    with pytest.raises(ClientError) as err:
        fsx.create_file_system(**params)
    after = (len(fsx.describe_file_systems()["FileSystems"]), len(box.ledger(service="fsx")))
    assert after == before
    return dict(err.value.response["Error"])


def test_a_group_without_lnet_port_988_is_refused(box: Box, place: tuple[str, str]) -> None:
    subnet, sg = place
    ec2 = box.client("ec2")
    # the wrong port, and the right port from an unrelated range: neither admits LNET
    ec2.authorize_security_group_ingress(GroupId=sg, IpPermissions=[
        {"IpProtocol": "tcp", "FromPort": 1018, "ToPort": 1023,
         "UserIdGroupPairs": [{"GroupId": sg}]},
        {"IpProtocol": "tcp", "FromPort": 988, "ToPort": 988,
         "IpRanges": [{"CidrIp": "192.168.0.0/24"}]}])
    error = _refused(box, _lustre(subnet, sg))
    assert error["Code"] == "InvalidNetworkSettings"
    assert "do not permit Lustre LNET network traffic on port 988" in error["Message"]


def test_capacity_and_throughput_follow_the_model(box: Box, place: tuple[str, str]) -> None:
    subnet, sg = place
    for capacity in (1000, 3600, 4000):
        error = _refused(box, _lustre(subnet, sg, capacity=capacity))
        assert error["Code"] == "BadRequest" and "increments of 2400 GiB" in error["Message"]
    assert _refused(box, _lustre(subnet, sg, throughput=200))["Code"] == \
        "InvalidPerUnitStorageThroughput"


def test_creating_available_deleting_gone(box: Box, place: tuple[str, str]) -> None:
    subnet, sg = place
    box.client("ec2").authorize_security_group_ingress(GroupId=sg, IpPermissions=[
        {"IpProtocol": "tcp", "FromPort": 988, "ToPort": 988,
         "UserIdGroupPairs": [{"GroupId": sg}]}])
    fsx = box.client("fsx")
    made = fsx.create_file_system(ClientRequestToken="t1", **_lustre(subnet, sg, 4800, 250))
    fs = made["FileSystem"]
    fs_id = fs["FileSystemId"]
    assert fs["Lifecycle"] == "CREATING"
    again = fsx.create_file_system(ClientRequestToken="t1", **_lustre(subnet, sg, 4800, 250))
    assert again["FileSystem"]["FileSystemId"] == fs_id   # an idempotent retry
    box.advance(CREATE_SECONDS + 1)
    (fs,) = fsx.describe_file_systems(FileSystemIds=[fs_id])["FileSystems"]
    assert fs["Lifecycle"] == "AVAILABLE" and fs["StorageCapacity"] == 4800
    assert fs["DNSName"] == f"{fs_id}.fsx.us-west-2.amazonaws.com"
    assert fs["VpcId"] == box.client("ec2").describe_subnets(
        SubnetIds=[subnet])["Subnets"][0]["VpcId"]
    mount = fs["LustreConfiguration"]["MountName"]
    assert len(mount) == 8 and mount.isalnum()
    assert fs["LustreConfiguration"]["PerUnitStorageThroughput"] == 250

    assert fsx.delete_file_system(FileSystemId=fs_id)["Lifecycle"] == "DELETING"
    box.advance(DELETE_SECONDS + 1)
    with pytest.raises(ClientError) as gone:
        fsx.describe_file_systems(FileSystemIds=[fs_id])
    assert gone.value.response["Error"]["Code"] == "FileSystemNotFound"
    assert [e["action"] for e in box.ledger(service="fsx")] == [
        "CreateFileSystem", "DeleteFileSystem"]


def test_only_one_subnet_of_the_group_vpc(box: Box, place: tuple[str, str]) -> None:
    subnet, sg = place
    ec2 = box.client("ec2")
    other_vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    other_sg = ec2.create_security_group(GroupName="x", Description="x",
                                         VpcId=other_vpc)["GroupId"]
    error = _refused(box, _lustre(subnet, other_sg))
    assert error["Code"] == "InvalidNetworkSettings" and other_sg in error["Message"]
    error = _refused(box, {**_lustre(subnet, sg), "SubnetIds": [subnet, subnet]})
    assert error["Code"] == "InvalidNetworkSettings"
