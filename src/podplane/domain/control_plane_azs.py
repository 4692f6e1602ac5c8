"""Which Availability Zones the EKS control plane goes in.

EKS needs subnets in two AZs and refuses some AZs outright. The EKS User Guide ("View Amazon
EKS networking requirements for VPC and subnets", #network-requirements-subnets) names the AZ
*ids* that never take a cluster; ids, not names, because names map to ids per account. Others
can be refused for a while: CreateCluster then fails with `UnsupportedAvailabilityZoneException`
whose message ends with the AZs to choose from (EKS User Guide, "Troubleshoot problems with
Amazon EKS clusters and nodes", #ice; the exception's `validZones` in botocore's eks model).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from podplane.domain.errors import InvalidInput

NEEDED = 2
NEVER_IDS = frozenset({"use1-az3", "usw1-az2", "cac1-az3"})
REFUSAL = "UnsupportedAvailabilityZoneException"
_AZ_NAME = re.compile(r"\b[a-z]{2}(?:-[a-z]+)+-\d[a-z]\b")


@dataclass(frozen=True)
class Zone:
    name: str
    zone_id: str


def control_plane_azs(zones: list[Zone], preferred: list[str], *,
                      valid: list[str] | None = None,
                      refused: frozenset[str] = frozenset()) -> list[str]:
    """Two AZ names for the control plane: the `preferred` ones first (the AZs the network
    already has subnets in), then the region's others in name order; never an AZ whose id
    EKS is known to refuse, one named in `refused`, or one outside `valid` when EKS listed
    the AZs it accepts."""
    known = {z.name: z for z in zones}
    order = [a for a in preferred if a in known] + sorted(a for a in known if a not in preferred)

    def usable(name: str) -> bool:
        return (known[name].zone_id not in NEVER_IDS and name not in refused
                and (valid is None or name in valid))
    chosen = [a for a in dict.fromkeys(order) if usable(a)][:NEEDED]
    if len(chosen) < NEEDED:
        raise InvalidInput(
            "EKS needs subnets in two Availability Zones it supports; this region has "
            f"{len(chosen)} ({', '.join(chosen) or 'none'}).",
            hint="Choose another region, or retry later if EKS named few AZs for lack of room.")
    return chosen


def valid_zones_in(message: str) -> list[str] | None:
    """The AZ names an `UnsupportedAvailabilityZoneException` message offers, or None when the
    message is some other error."""
    if REFUSAL not in message:
        return None
    _, sep, offered = message.rpartition("choose from these")
    return _AZ_NAME.findall(offered) if sep else []


def refused_zone_in(message: str) -> frozenset[str]:
    """The AZ the refusal names as targeted (before the list it offers)."""
    head = message.rpartition("choose from these")[0] or message
    return frozenset(_AZ_NAME.findall(head))
