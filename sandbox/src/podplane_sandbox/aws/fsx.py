"""FSx for Lustre file systems, with the rules moto's `fsx` backend leaves out.

moto answers CreateFileSystem with no `Lifecycle`, no `VpcId` and no `MountName`, accepts any
capacity and any security group, and forgets a file system the moment it is deleted. AWS:

- botocore `fsx` model, CreateFileSystem `StorageCapacity`: SSD SCRATCH_2 / PERSISTENT_1 /
  PERSISTENT_2 take 1200 GiB, 2400 GiB or a multiple of 2400 GiB; SCRATCH_1 takes 1200, 2400 or
  a multiple of 3600. `PerUnitStorageThroughput` is required for PERSISTENT_* (PERSISTENT_2 SSD:
  125, 250, 500, 1000 MB/s/TiB; PERSISTENT_1 SSD: 50, 100, 200). `DeploymentType` defaults to
  SCRATCH_1. A Lustre file system sits in exactly one subnet.
- FSx Lustre User Guide, "Controlling access with security groups"
  (limit-access-security-groups.html) and "You can't create a file system because of a
  misconfigured security group" (cannot-create-fs.html): the groups (the VPC's default group
  when none is named) must admit Lustre LNET traffic, TCP 988, from the file system's own
  groups or the subnet's addresses; otherwise CreateFileSystem fails naming port 988. Clients
  also need TCP 1018-1023; AWS does not check those at creation, so neither do we.
- `Lifecycle` CREATING -> AVAILABLE (minutes), DeleteFileSystem -> DELETING -> gone;
  `DNSName` `<id>.fsx.<region>.amazonaws.com`; `LustreConfiguration.MountName` 8 lowercase
  characters (`fsx` for SCRATCH_1), which clients mount as `<dns>@tcp:/<mountname>`.

Storage capacity increases (UpdateFileSystem `StorageCapacity`), sandbox/.../aws/fsx_resize.py:
botocore `fsx` model UpdateFileSystemRequest.StorageCapacity and AdministrativeAction; FSx
Lustre User Guide, "Managing storage capacity".

Only LUSTRE is emulated: other types are refused with a message that says so.
"""

from __future__ import annotations

import ipaddress
from typing import Any, cast

from podplane_sandbox.aws import moto_side
from podplane_sandbox.aws.base import Emulator, paginate
from podplane_sandbox.aws.errors import AwsError
from podplane_sandbox.aws.fsx_resize import advance_update, start_update
from podplane_sandbox.aws.world import ACCOUNT, World

CREATE_SECONDS = 10 * 60.0   # PERSISTENT file systems take minutes to create
DELETE_SECONDS = 5 * 60.0
LNET_PORT = 988
SSD_STEP = {"SCRATCH_1": 3600, "SCRATCH_2": 2400, "PERSISTENT_1": 2400, "PERSISTENT_2": 2400}
THROUGHPUT = {"PERSISTENT_1": (50, 100, 200), "PERSISTENT_2": (125, 250, 500, 1000)}
TARGET_PREFIX = "AWSSimbaAPIService_v20180301."
_MOUNT_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789"


def bad_request(message: str) -> AwsError:
    return AwsError("BadRequest", message)


def network_error(message: str, **fields: object) -> AwsError:
    return AwsError("InvalidNetworkSettings", message, fields=dict(fields))


def not_found(fs_id: str) -> AwsError:
    return AwsError("FileSystemNotFound", f"File system '{fs_id}' does not exist.")


class FsxEmulator(Emulator):
    service = "fsx"

    def __init__(self, world: World) -> None:
        super().__init__(world)

    @property
    def systems(self) -> dict[str, Any]:
        return self.table("file_systems")

    def tick(self, now: float) -> None:
        for fs_id, fs in list(self.systems.items()):
            if fs["Lifecycle"] == "CREATING" and now >= fs["_until"]:
                fs["Lifecycle"] = "AVAILABLE"
            elif fs["Lifecycle"] == "DELETING" and now >= fs["_until"]:
                del self.systems[fs_id]
            else:
                advance_update(fs, now)

    # API ------------------------------------------------------------------------------------
    def create_file_system(self, p: dict[str, Any]) -> dict[str, Any]:
        token = p.get("ClientRequestToken")
        for fs in self.systems.values():
            if token and fs.get("_token") == token:
                return {"FileSystem": fs}   # an idempotent retry
        if p["FileSystemType"] != "LUSTRE":
            raise bad_request("The podplane sandbox emulates FSx for Lustre only.")
        lustre = dict(p.get("LustreConfiguration") or {})
        deployment = lustre.get("DeploymentType") or "SCRATCH_1"
        capacity = _check_capacity(p.get("StorageCapacity"), deployment)
        _check_throughput(lustre.get("PerUnitStorageThroughput"), deployment)
        subnet, vpc = _check_subnet(p["SubnetIds"])
        groups = _check_groups(p.get("SecurityGroupIds") or [], vpc)
        _check_lnet(groups, subnet)
        fs_id = "fs-" + self.w.hex_id(17)
        mount = "fsx" if deployment == "SCRATCH_1" else "".join(
            self.w.rng.choice(_MOUNT_CHARS) for _ in range(8))
        lustre.update(DeploymentType=deployment, MountName=mount,
                      DataCompressionType=lustre.get("DataCompressionType", "NONE"))
        fs = {"OwnerId": ACCOUNT, "CreationTime": self.w.now(), "FileSystemId": fs_id,
              "FileSystemType": "LUSTRE", "Lifecycle": "CREATING", "StorageCapacity": capacity,
              "StorageType": p.get("StorageType", "SSD"), "VpcId": vpc, "SubnetIds": [subnet],
              "NetworkInterfaceIds": ["eni-" + self.w.hex_id(17)],
              "DNSName": f"{fs_id}.fsx.{self.w.region}.amazonaws.com",
              "ResourceARN": self.w.arn("fsx", f"file-system/{fs_id}"),
              "Tags": list(p.get("Tags") or []), "LustreConfiguration": lustre,
              "FileSystemTypeVersion": p.get("FileSystemTypeVersion", "2.15"),
              "_until": self.w.now() + CREATE_SECONDS, "_token": token, "_groups": groups}
        self.systems[fs_id] = fs
        self.w.record("fsx", "CreateFileSystem", fs_id, token)
        return {"FileSystem": fs}

    def describe_file_systems(self, p: dict[str, Any]) -> dict[str, Any]:
        ids = p.get("FileSystemIds") or []
        for fs_id in ids:
            if fs_id not in self.systems:
                raise not_found(fs_id)
        found = [self.systems[i] for i in ids] if ids else list(self.systems.values())
        page, nxt = paginate(found, p, "MaxResults", "NextToken", default=2147483647)
        return {"FileSystems": page, **({"NextToken": nxt} if nxt else {})}

    def update_file_system(self, p: dict[str, Any]) -> dict[str, Any]:
        fs_id = p["FileSystemId"]
        fs = self.systems.get(fs_id)
        if fs is None:
            raise not_found(fs_id)
        token = p.get("ClientRequestToken")
        if token and fs.get("_update_token") == token:
            return {"FileSystem": fs}   # an idempotent retry
        start_update(fs, p, self.w.now())
        fs["_update_token"] = token
        self.w.record("fsx", "UpdateFileSystem", fs_id, token,
                      StorageCapacity=p.get("StorageCapacity"))
        return {"FileSystem": fs}

    def delete_file_system(self, p: dict[str, Any]) -> dict[str, Any]:
        fs_id = p["FileSystemId"]
        fs = self.systems.get(fs_id)
        if fs is None:
            raise not_found(fs_id)
        if fs["Lifecycle"] in ("CREATING", "UPDATING"):
            raise bad_request(f"Cannot delete file system {fs_id} while it is "
                              f"{fs['Lifecycle']}.")
        if fs["Lifecycle"] != "DELETING":
            fs.update(Lifecycle="DELETING", _until=self.w.now() + DELETE_SECONDS)
            self.w.record("fsx", "DeleteFileSystem", fs_id, p.get("ClientRequestToken"))
        return {"FileSystemId": fs_id, "Lifecycle": "DELETING", "LustreResponse": {}}


def lifecycle_of(world: World, fs_id: str) -> dict[str, Any] | None:
    """A file system as FSx shows it, for the Kubernetes side (the CSI node plugin mounts
    it); None when FSx has no such file system."""
    with world.lock:
        world.tick()
        found = world.service_state("fsx").get("file_systems", {}).get(fs_id)
        return cast("dict[str, Any] | None", dict(found) if found else None)


def _check_capacity(capacity: int | None, deployment: str) -> int:
    if capacity is None:
        raise bad_request("StorageCapacity is required for Lustre file systems.")
    step = SSD_STEP[deployment]
    if capacity in (1200, 2400) or (capacity > 0 and capacity % step == 0):
        return capacity
    raise bad_request(f"Invalid StorageCapacity {capacity} GiB for {deployment} SSD: valid "
                      f"values are 1200 GiB, 2400 GiB, and increments of {step} GiB.")


def _check_throughput(value: int | None, deployment: str) -> None:
    allowed = THROUGHPUT.get(deployment)
    if allowed is None:
        if value is not None:
            raise AwsError("IncompatibleParameterError",
                           f"PerUnitStorageThroughput is not supported for {deployment}.")
        return
    if value not in allowed:
        raise AwsError("InvalidPerUnitStorageThroughput",
                       f"PerUnitStorageThroughput must be one of {list(allowed)} MB/s/TiB "
                       f"for {deployment} SSD file systems, not {value}.")


def _check_subnet(subnets: list[str]) -> tuple[str, str]:
    if len(subnets) != 1:
        raise network_error("A Lustre file system takes exactly one subnet ID.")
    found = moto_side.subnet_vpc(subnets[0])
    if found is None:
        raise network_error(f"The subnet ID '{subnets[0]}' does not exist",
                            InvalidSubnetId=subnets[0])
    return subnets[0], found[0]


def _check_groups(groups: list[str], vpc: str) -> list[str]:
    if not groups:
        default = moto_side.default_security_group(vpc)
        return [default] if default else []
    for group in groups:
        if moto_side.security_group_vpc(group) != vpc:
            raise network_error(f"The security group '{group}' does not exist or is not in "
                                f"the VPC {vpc}.", InvalidSecurityGroupId=group)
    return groups


def _check_lnet(groups: list[str], subnet: str) -> None:
    """Some group must admit TCP 988 from the groups themselves or from the subnet's range."""
    cidr = moto_side.subnet_cidr(subnet)
    for group in groups:
        for rule in moto_side.ingress_rules(group) or []:
            if _admits_lnet(rule, groups, cidr):
                return
    raise network_error(
        "The file system cannot be created because the default security group in the subnet "
        "provided or the provided security groups do not permit Lustre LNET network traffic "
        f"on port {LNET_PORT} from the file system's security groups or subnet.")


def _admits_lnet(rule: dict[str, Any], groups: list[str], cidr: str | None) -> bool:
    if rule["protocol"] == "-1":
        ports_ok = True
    elif rule["protocol"] == "tcp":
        ports_ok = rule["from"] <= LNET_PORT <= rule["to"]
    else:
        return False
    if not ports_ok:
        return False
    if rule["group"]:
        return bool(rule["group"] in groups)
    if rule["cidr"] and cidr:
        return ipaddress.ip_network(cidr).subnet_of(ipaddress.ip_network(rule["cidr"]))
    return False
