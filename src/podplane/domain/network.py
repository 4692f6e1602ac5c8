"""Network planning: the VPC layout and the one capacity-path function for compute subnets.

Every path that places capacity (cluster create, add instance group, Karpenter) calls
`place_compute_subnet`, so subnet placement rules live in exactly one place.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Literal

from podplane.domain.errors import InvalidInput
from podplane.domain.subnet_sizing import compute_prefix, secondary_cidr

COMPUTE_PREFIX = 20          # a /20 gives 4,091 usable addresses per AZ for nodes and pods
DEFAULT_VPC_CIDR = "10.0.0.0/16"
COMPUTE_TAG = "podplane:compute-subnet"


@dataclass(frozen=True)
class SubnetFact:
    subnet_id: str
    cidr: str
    availability_zone: str
    available_ips: int
    tags: dict[str, str]

    @property
    def is_compute(self) -> bool:
        return self.tags.get(COMPUTE_TAG) == "true"


@dataclass(frozen=True)
class Placement:
    availability_zone: str
    action: Literal["reuse", "create", "explicit"]
    subnet_id: str | None
    cidr: str | None
    reason: str
    secondary_cidr: str | None = None  # associate this VPC CIDR first (the VPC is full)


def place_compute_subnet(
    az: str, subnets: list[SubnetFact], vpc_cidr: str, *, needed_ips: int,
    explicit_subnet_id: str | None = None, force_new: bool = False,
    vpc_cidrs: tuple[str, ...] = (),
) -> Placement:
    """Where capacity in `az` goes: the explicit subnet, the AZ's compute subnet, or a new
    block sized for `needed_ips` (at least a /20), in a secondary VPC CIDR when the VPC's
    CIDRs (`vpc_cidr` plus `vpc_cidrs`) have no room."""
    if explicit_subnet_id:
        return _explicit(az, subnets, explicit_subnet_id)
    if not force_new:
        roomy = [s for s in subnets
                 if s.is_compute and s.availability_zone == az and s.available_ips >= needed_ips]
        if roomy:
            s = max(roomy, key=lambda s: s.available_ips)
            return Placement(az, "reuse", s.subnet_id, s.cidr,
                             f"reusing compute subnet {s.subnet_id} ({s.available_ips} IPs free)")
    prefix = compute_prefix(needed_ips)
    why = "a new subnet was requested" if force_new else f"no compute subnet in {az} has room"
    why += f"; {needed_ips} addresses for the nodes and their pods"
    used = [s.cidr for s in subnets]
    for block in (vpc_cidr, *vpc_cidrs):
        cidr = free_block(block, used, prefix)
        if cidr:
            return Placement(az, "create", None, cidr, f"creating /{prefix} {cidr}: {why}")
    extra = secondary_cidr(vpc_cidr, [vpc_cidr, *vpc_cidrs])
    cidr = next_free_block(extra, [], prefix)
    return Placement(az, "create", None, cidr,
                     f"creating /{prefix} {cidr} in a secondary VPC CIDR {extra}: {why}",
                     secondary_cidr=extra)


def _explicit(az: str, subnets: list[SubnetFact], subnet_id: str) -> Placement:
    for s in subnets:
        if s.subnet_id == subnet_id:
            if s.availability_zone != az:
                raise InvalidInput(
                    f"Subnet {subnet_id} is in {s.availability_zone}, not {az}.",
                    hint=f"Pick a subnet in {az} or change the availability zone.",
                    field="subnet_id")
            return Placement(az, "explicit", s.subnet_id, s.cidr, "the subnet you chose")
    raise InvalidInput(f"Subnet {subnet_id} is not in the cluster's VPC.", field="subnet_id")


def free_block(vpc_cidr: str, used: list[str], prefix: int) -> str | None:
    """The first /prefix block inside `vpc_cidr` that overlaps no existing subnet, if any."""
    vpc = ipaddress.ip_network(vpc_cidr)
    if prefix < vpc.prefixlen:
        return None
    taken = [ipaddress.ip_network(c) for c in used]
    for block in vpc.subnets(new_prefix=prefix):
        if not any(block.overlaps(t) for t in taken):
            return str(block)
    return None


def next_free_block(vpc_cidr: str, used: list[str], prefix: int) -> str:
    """The first /prefix block inside the VPC that overlaps no existing subnet."""
    found = free_block(vpc_cidr, used, prefix)
    if found:
        return found
    raise InvalidInput(
        f"The VPC {vpc_cidr} has no free /{prefix} block left.",
        hint="Delete unused subnets or add a secondary CIDR to the VPC.",
    )


@dataclass(frozen=True)
class VpcLayout:
    vpc_cidr: str
    public: list[tuple[str, str]]    # (az, cidr)
    private: list[tuple[str, str]]   # EKS control-plane ENIs: two AZs
    compute: tuple[str, str]         # (az, /20 cidr) for the first accelerated group


def plan_vpc(compute_az: str, all_azs: list[str], vpc_cidr: str = DEFAULT_VPC_CIDR) -> VpcLayout:
    """Two public and two private /24s (EKS needs two AZs) plus a /20 compute subnet."""
    if compute_az not in all_azs:
        raise InvalidInput(f"{compute_az} is not an availability zone of this region.",
                           hint=f"Choose one of: {', '.join(all_azs)}.", field="availability_zone")
    if len(all_azs) < 2:
        raise InvalidInput("EKS needs subnets in at least two availability zones.")
    pair = [compute_az] + [a for a in all_azs if a != compute_az][:1]
    used: list[str] = []
    compute = next_free_block(vpc_cidr, used, COMPUTE_PREFIX)
    used.append(compute)
    public, private = [], []
    for az in pair:
        cidr = next_free_block(vpc_cidr, used, 24)
        used.append(cidr)
        public.append((az, cidr))
    for az in pair:
        cidr = next_free_block(vpc_cidr, used, 24)
        used.append(cidr)
        private.append((az, cidr))
    return VpcLayout(vpc_cidr, public, private, (compute_az, compute))
