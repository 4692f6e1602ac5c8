"""EKS CreateCluster in Availability Zones EKS accepts.

The AZs come from `domain.control_plane_azs` (known-refused AZ ids avoided up front). When EKS
still refuses one (`UnsupportedAvailabilityZoneException`, EKS User Guide troubleshooting #ice),
nothing was created: subnets are found or made in the AZs the refusal offers, and the create is
sent again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from podplane.domain.control_plane_azs import (
    Zone,
    control_plane_azs,
    refused_zone_in,
    valid_zones_in,
)
from podplane.domain.errors import CloudError
from podplane.ops.context import StepContext
from podplane.services.cloud_access import Cloud
from podplane.services.clusters.inspect import availability_zones
from podplane.services.clusters.network import ROLE_TAG, Network

ATTEMPTS = 4  # a region has at most six AZs; each refusal rules out at least one
Create = Callable[[list[str], int], Awaitable[dict[str, Any]]]


async def create_in_supported_azs(ctx: StepContext, cloud: Cloud, cluster: str, region: str,
                                  net: dict[str, Any], create: Create) -> dict[str, Any]:
    """`create(subnet_ids, attempt)` with subnets in two AZs EKS takes; retried on a refusal."""
    network = Network(cloud.aws.ec2, cluster, region)
    zones = [Zone(z["name"], z["id"]) for z in await availability_zones(cloud)]
    azs = control_plane_azs(zones, await _network_azs(network, net))
    refused: frozenset[str] = frozenset()
    for attempt in range(ATTEMPTS):
        subnets = await network.control_plane_subnets(net["vpc_id"], net["vpc_cidr"], azs)
        try:
            return await create(subnets, attempt)
        except CloudError as err:
            offered = valid_zones_in(err.message)
            if offered is None:
                raise
            refused |= refused_zone_in(err.message) & set(azs)
            await ctx.note("EKS refused an Availability Zone; choosing others",
                           tried=azs, refused=sorted(refused), offered=offered)
            azs = control_plane_azs(zones, azs, valid=offered or None, refused=refused)
    raise CloudError(f"EKS refused the control plane's Availability Zones {ATTEMPTS} times "
                     f"(last tried: {', '.join(azs)}).", code="eks_zones_refused",
                     hint="Retry the step later, or create the cluster in another region.")


async def used_subnets(cloud: Cloud, cluster_name: str, region: str, vpc_id: str,
                       cluster: dict[str, Any]) -> dict[str, Any]:
    """The subnets (and their AZs) an EKS cluster really has, as describe-cluster shows them."""
    ids = list(cluster.get("resourcesVpcConfig", {}).get("subnetIds", []))
    facts = await Network(cloud.aws.ec2, cluster_name, region).subnet_facts(vpc_id)
    azs = {f.subnet_id: f.availability_zone for f in facts}
    return {"subnets": ids, "availability_zones": sorted({azs[s] for s in ids if s in azs})}


async def _network_azs(network: Network, net: dict[str, Any]) -> list[str]:
    """The compute AZ first, then the other AZs the network step gave private subnets."""
    facts = await network.subnet_facts(net["vpc_id"])
    private = sorted(f.availability_zone for f in facts
                     if f.tags.get(ROLE_TAG, "").startswith("private-"))
    return list(dict.fromkeys([net.get("compute_az", ""), *private]))
