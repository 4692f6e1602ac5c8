"""Availability Zones EKS will not put a control plane in.

CreateCluster refuses subnets in some AZs with `UnsupportedAvailabilityZoneException`, HTTP 400,
whose body carries `clusterName` and `validZones` (botocore eks model, 2017-11-01). The EKS User
Guide lists the AZ ids that never take a cluster ("View Amazon EKS networking requirements for
VPC and subnets", #network-requirements-subnets: use1-az3, usw1-az2, cac1-az3; eksctl avoids the
same ids, eksctl-io/eksctl pkg/az/az_test.go) and shows the refusal's wording ("Troubleshoot
problems with Amazon EKS clusters and nodes", #ice). use1-az3 is us-east-1e in the sandbox's
account (moto's map), the AZ named in eksctl#817. Tests refuse more with `refuse_zones` (the
same refusal AWS gives when an AZ has no room for control planes).
"""

from __future__ import annotations

from podplane_sandbox.aws.base import Emulator
from podplane_sandbox.aws.errors import AwsError
from podplane_sandbox.aws.world import AZ_IDS, AZS

NEVER = {"us-east-1": ("use1-az3",), "us-west-1": ("usw1-az2",), "ca-central-1": ("cac1-az3",)}


class ZonesMixin(Emulator):
    def refuse_zones(self, zones: list[str]) -> None:
        """Refuse control planes in these AZs (names or ids) of the sandbox's region too."""
        self.table("zone_rules")[self.w.region] = sorted(zones)

    def refused_zones(self) -> set[str]:
        region = self.w.region
        return {*NEVER.get(region, ()), *self.table("zone_rules").get(region, [])}

    def check_zones(self, cluster: str, subnet_ids: list[str]) -> None:
        """Raise as EKS does when a subnet sits in an AZ that takes no control plane."""
        refused = self.refused_zones()
        if not refused or not self.w.subnet_azs:
            return
        azs = [self.w.subnet_azs(s) for s in subnet_ids]
        bad = [az for az in azs if az and _refused(az, refused)]
        if not bad:
            return
        valid = [az for az in AZS if not _refused(az, refused)]
        raise AwsError(
            "UnsupportedAvailabilityZoneException",
            f"Cannot create cluster '{cluster}' because {bad[0]}, the targeted availability "
            "zone, does not currently have sufficient capacity to support the cluster. Retry "
            f"and choose from these availability zones: {', '.join(valid)}",
            400, fields={"clusterName": cluster, "validZones": valid})


def _refused(az: str, refused: set[str]) -> bool:
    return az in refused or AZ_IDS.get(az, "") in refused

