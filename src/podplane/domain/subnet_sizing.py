"""How many addresses a compute subnet needs, and how big a block that is.

With the Amazon VPC CNI every pod takes a VPC address from its node's ENIs, so a node can hold
up to ENIs x IPv4-per-ENI addresses (EC2 "IP addresses per network interface per instance type";
the same limits amazon-vpc-cni-k8s derives max-pods from: ENIs x (IPs - 1) + 2). AWS's HyperPod
capacity guidance counts about 81 addresses per p5.48xlarge in use; we size for the ceiling so
the CNI's warm pool never starves. Multi-card types count the default network card only, as the
CNI does.
"""

from __future__ import annotations

import ipaddress

from podplane.domain.errors import InvalidInput

# EC2 type -> (ENIs on network card 0, IPv4 addresses per ENI)
ENI_LIMITS: dict[str, tuple[int, int]] = {
    "p5.48xlarge": (2, 50), "p5e.48xlarge": (2, 50), "p5en.48xlarge": (4, 50),
    "p4d.24xlarge": (15, 50), "p4de.24xlarge": (15, 50),
    "trn1.32xlarge": (8, 50), "trn1n.32xlarge": (8, 50),
    "g5.xlarge": (4, 15), "g5.2xlarge": (4, 15), "g5.8xlarge": (8, 30),
    "g5.12xlarge": (15, 50), "g5.48xlarge": (7, 50),
    "g6.xlarge": (4, 15), "g6e.xlarge": (4, 15), "g6e.48xlarge": (10, 50),
    "m5.xlarge": (4, 15), "m5.2xlarge": (4, 15), "m5.12xlarge": (8, 30),
    "c5.xlarge": (4, 15), "c5.4xlarge": (8, 30), "t3.medium": (3, 6),
}
UNKNOWN_TYPE = (15, 50)   # the largest common limit: never undersize an unknown type
AWS_RESERVED = 5          # EC2 keeps the first four and the last address of every subnet
HEADROOM = 16             # NAT / endpoint ENIs and replacements in flight
MIN_PREFIX = 20           # the default compute subnet (4,091 usable addresses)
MAX_PREFIX = 16           # the largest subnet EC2 allows


def ips_per_node(instance_type: str) -> int:
    enis, per_eni = ENI_LIMITS.get(instance_type.removeprefix("ml."), UNKNOWN_TYPE)
    return enis * per_eni


def subnet_ips(instance_type: str, count: int) -> int:
    """Addresses `count` nodes of `instance_type` can take, with headroom."""
    return count * (ips_per_node(instance_type) + 1) + HEADROOM


def max_nodes_in_one_subnet(instance_type: str) -> int:
    """How many nodes of `instance_type` the largest subnet EC2 allows (a /16) can hold."""
    usable: int = 2 ** (32 - MAX_PREFIX) - AWS_RESERVED - HEADROOM
    return usable // (ips_per_node(instance_type) + 1)


def check_fits_one_subnet(instance_type: str, count: int, field: str = "count") -> None:
    """Refuse at the request (422) a group whose nodes and pods cannot fit one subnet: its
    compute subnet would fail to be sized at the network step, after the request was
    accepted (issue 31, "refused before accepted")."""
    most = max_nodes_in_one_subnet(instance_type)
    if count <= most:
        return
    need = subnet_ips(instance_type, count)
    raise InvalidInput(
        f"{count} {instance_type} nodes need {need:,} addresses ({ips_per_node(instance_type)} "
        f"per node for it and its pods, with the VPC CNI); one subnet holds at most "
        f"{2 ** (32 - MAX_PREFIX) - AWS_RESERVED:,} (a /{MAX_PREFIX}), so at most {most} "
        "nodes of this type per instance group.",
        hint=f"Ask for at most {most} nodes here and add the rest as more instance groups "
             "(each gets its own subnet).", field=field)


def compute_prefix(needed_ips: int) -> int:
    """The smallest block, at least a /20, whose usable addresses hold `needed_ips`."""
    for prefix in range(MIN_PREFIX, MAX_PREFIX - 1, -1):
        if 2 ** (32 - prefix) - AWS_RESERVED >= needed_ips:
            return prefix
    raise InvalidInput(
        f"{needed_ips} addresses do not fit in one subnet (a /16 holds "
        f"{2 ** 16 - AWS_RESERVED}).",
        hint="Split the nodes across several instance groups (each gets its own subnet).")


def secondary_cidr(primary: str, in_use: list[str]) -> str:
    """The next /16 after the VPC's CIDRs in the same private range (AWS's HyperPod reference
    adds a /16 secondary CIDR for compute; EC2 allows one from the primary's RFC 1918 range)."""
    base = ipaddress.IPv4Network(primary)
    space = next(ipaddress.IPv4Network(s) for s in ("10.0.0.0/8", "172.16.0.0/12",
                                                     "192.168.0.0/16", "100.64.0.0/10")
                 if base.subnet_of(ipaddress.IPv4Network(s)))
    taken = [ipaddress.ip_network(c) for c in in_use]
    for block in space.subnets(new_prefix=16):
        if not any(block.overlaps(t) for t in taken):
            return str(block)
    raise InvalidInput(f"No free /16 left in {space} for a secondary VPC CIDR.")
