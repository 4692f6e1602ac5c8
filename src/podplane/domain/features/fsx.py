"""FSx for Lustre storage as a feature: the CSI driver add-on, a file system (podplane's own in
the cluster's compute subnet, or an existing one given by id), the security group rules Lustre
needs, and a statically provisioned PersistentVolume with its claim in the jobs namespace.

Static provisioning (kubernetes-sigs/aws-fsx-csi-driver, examples/kubernetes/static_provisioning):
the node plugin mounts `<dnsname>@tcp:/<mountname>` and calls no AWS API, so the driver gets no
IAM role here; only dynamic provisioning (a StorageClass) would need its controller to create
file systems. Rules read from the botocore `fsx` model (CreateFileSystem):

- PERSISTENT_2 SSD capacity: 1200 GiB, 2400 GiB, or a multiple of 2400 GiB;
- PERSISTENT_2 SSD `PerUnitStorageThroughput`: 125, 250, 500 or 1000 MB/s/TiB;
- a FileSystemId is `fs-` and 8 to 21 hex digits.

Security groups (FSx Lustre User Guide, limit-access-security-groups.html): Lustre clients
and servers talk over TCP 988 and 1018-1023; both rules go on the cluster's node security
group, sourced from itself, which the file system also uses.
"""

from __future__ import annotations

import re
from typing import Any

from podplane.domain.errors import InvalidInput
from podplane.domain.features.model import FEATURE_TAG, Resource
from podplane.domain.jobs.kinds import NAMESPACE as JOBS_NAMESPACE

Shape = dict[str, Any]
NAME = "fsx-lustre"
CSI_ADDON = "aws-fsx-csi-driver"
CSI_DRIVER = "fsx.csi.aws.com"
DEPLOYMENT = "PERSISTENT_2"
THROUGHPUTS = (125, 250, 500, 1000)
CAPACITY_STEP = 2400
MAX_CAPACITY = 2400 * 1000   # far above any account's default FSx storage quota
LUSTRE_PORTS = ((988, 988), (1018, 1023))
FS_ID = re.compile(r"fs-[0-9a-f]{8,21}")
PV_NAME = "podplane-fsx-lustre"
CLAIM = "fsx-lustre"
# Static PV and claim meet by this class name; no StorageClass object is made (nothing is
# provisioned dynamically), and naming one keeps the default class from being assigned.
STATIC_CLASS = "podplane-fsx-static"
CLUSTER_TAG = "podplane:cluster"
# In what the services found: the live claim's request in GiB (it never changes, see claim()).
CLAIMED_GIB = "podplane:claimedGiB"


def check(settings: Shape) -> Shape:
    """Capacity, throughput and an existing file system's id, each refused by name."""
    capacity = settings["capacity_gib"]
    if capacity not in (1200, 2400) and capacity % CAPACITY_STEP:
        raise InvalidInput(f"capacity_gib {capacity} is not a size FSx for Lustre offers: "
                           f"1200, 2400, or a multiple of {CAPACITY_STEP} GiB "
                           f"({DEPLOYMENT} SSD).", field="capacity_gib")
    if settings["throughput_per_tib"] not in THROUGHPUTS:
        raise InvalidInput("throughput_per_tib must be one of "
                           f"{', '.join(map(str, THROUGHPUTS))} MB/s/TiB ({DEPLOYMENT} SSD).",
                           field="throughput_per_tib")
    fs_id = settings["file_system_id"]
    if not isinstance(fs_id, str) or (fs_id and not FS_ID.fullmatch(fs_id)):
        raise InvalidInput("file_system_id must be an FSx file system id (fs- and 8 to 21 "
                           "hex digits), or empty to let podplane create one.",
                           field="file_system_id")
    return settings


def storage(on: bool, settings: Shape, cluster: str, subnet: str, group: str
            ) -> list[Resource]:
    """The file system: an existing one by id (never podplane's to delete: its tag decides),
    or podplane's own after the Lustre ports are open in the node group."""
    existing = settings.get("file_system_id") or ""
    if existing:
        return [Resource(NAME, "fsx-filesystem", f"fsx file system {existing}",
                         {"FileSystemId": existing, "FileSystemType": "LUSTRE"}, on)]
    return [*(ingress(group, low, high, on) for low, high in LUSTRE_PORTS),
            file_system(settings, cluster, subnet, on)]


def ingress(group: str, low: int, high: int, on: bool) -> Resource:
    """TCP `low`-`high` into the node group from itself, tagged as podplane's (EC2
    AuthorizeSecurityGroupIngress TagSpecifications, resource type security-group-rule)."""
    return Resource(NAME, "sg-ingress", f"ec2 ingress {group} tcp {low}-{high}",
                    {"groupId": group, "protocol": "tcp", "from": low, "to": high,
                     "source": group, "tags": {FEATURE_TAG: NAME}}, on)


def file_system(settings: Shape, cluster: str, subnet: str, on: bool) -> Resource:
    return Resource(NAME, "fsx-filesystem", f"fsx file system podplane-{cluster}", {
        "FileSystemType": "LUSTRE", "StorageCapacity": settings["capacity_gib"],
        "SubnetIds": [subnet],
        "LustreConfiguration": {"DeploymentType": DEPLOYMENT,
                                "PerUnitStorageThroughput": settings["throughput_per_tib"]},
        "Tags": {FEATURE_TAG: NAME, CLUSTER_TAG: cluster}}, on)


def create_request(res: Resource, group: str) -> Shape:
    """CreateFileSystem's parameters for podplane's own file system resource."""
    want = res.desired
    return {"FileSystemType": "LUSTRE", "StorageCapacity": want["StorageCapacity"],
            "StorageType": "SSD", "SubnetIds": want["SubnetIds"], "SecurityGroupIds": [group],
            "LustreConfiguration": dict(want["LustreConfiguration"]),
            "Tags": [{"Key": k, "Value": v} for k, v in want["Tags"].items()]}


def volume(found: Shape | None, capacity: int) -> Shape:
    """The static PV (aws-fsx-csi-driver static provisioning example): ReadWriteMany,
    Retain (deleting the PV never touches the file system), `flock` for Lustre locks."""
    lustre = (found or {}).get("LustreConfiguration") or {}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": PV_NAME},
            "spec": {"capacity": {"storage": f"{capacity}Gi"}, "volumeMode": "Filesystem",
                     "accessModes": ["ReadWriteMany"], "mountOptions": ["flock"],
                     "persistentVolumeReclaimPolicy": "Retain",
                     "storageClassName": STATIC_CLASS,
                     "csi": {"driver": CSI_DRIVER,
                             "volumeHandle": (found or {}).get("FileSystemId"),
                             "volumeAttributes": {"dnsname": (found or {}).get("DNSName"),
                                                  "mountname": lustre.get("MountName")}}}}


def claim(capacity: int) -> Shape:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": CLAIM, "namespace": JOBS_NAMESPACE},
            "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": STATIC_CLASS,
                     "volumeName": PV_NAME,
                     "resources": {"requests": {"storage": f"{capacity}Gi"}}}}


def ours(fs: Shape, cluster: str) -> bool:
    tags = {t["Key"]: t["Value"] for t in fs.get("Tags") or []}
    return tags.get(FEATURE_TAG) == NAME and tags.get(CLUSTER_TAG) == cluster
