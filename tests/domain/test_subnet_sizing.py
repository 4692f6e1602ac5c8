"""Compute subnets sized for VPC-CNI: ENIs x IPv4-per-ENI per node, a larger block when a /20 is
too small, and a secondary VPC CIDR when the VPC is full."""

from __future__ import annotations

import ipaddress

import pytest

from podplane.domain.errors import InvalidInput
from podplane.domain.network import COMPUTE_TAG, SubnetFact, place_compute_subnet
from podplane.domain.subnet_sizing import (
    ENI_LIMITS,
    compute_prefix,
    ips_per_node,
    secondary_cidr,
    subnet_ips,
)


def test_per_node_addresses_follow_the_eni_limits() -> None:
    # amazon-vpc-cni-k8s misc/eni-max-pods.txt: max pods = ENIs x (IPs per ENI - 1) + 2
    for itype, max_pods in (("p5.48xlarge", 100), ("p5en.48xlarge", 198),
                            ("p4d.24xlarge", 737), ("g5.xlarge", 58), ("g5.48xlarge", 345),
                            ("g6e.48xlarge", 492), ("m5.12xlarge", 234), ("t3.medium", 17)):
        enis, per_eni = ENI_LIMITS[itype]
        assert enis * (per_eni - 1) + 2 == max_pods, itype
        assert ips_per_node(f"ml.{itype}") == enis * per_eni
    assert ips_per_node("ml.p5.48xlarge") >= 81  # AWS capacity guidance: ~81 in use per p5
    assert ips_per_node("ml.unknown.large") == 750  # never undersize an unknown type


def test_small_groups_keep_the_default_20_and_big_ones_grow() -> None:
    assert compute_prefix(subnet_ips("ml.g5.8xlarge", 2)) == 20
    assert compute_prefix(subnet_ips("ml.p5.48xlarge", 40)) == 20   # 40 x 101 + 16 = 4,056
    assert compute_prefix(subnet_ips("ml.p5.48xlarge", 41)) == 19
    assert compute_prefix(subnet_ips("ml.p4d.24xlarge", 80)) == 16  # 80 x 751 + 16 = 60,096
    with pytest.raises(InvalidInput) as err:
        compute_prefix(subnet_ips("ml.p4d.24xlarge", 100))
    assert "several instance groups" in (err.value.hint or "")


def test_a_big_group_gets_a_block_that_fits_in_the_primary_cidr() -> None:
    taken = [SubnetFact("subnet-a", "10.0.16.0/24", "us-west-2a", 200, {})]
    p = place_compute_subnet("us-west-2a", taken, "10.0.0.0/16",
                             needed_ips=subnet_ips("ml.p5.48xlarge", 100))
    block = ipaddress.ip_network(str(p.cidr))
    assert block.prefixlen == 18 and block.num_addresses - 5 >= 100 * 101
    assert not block.overlaps(ipaddress.ip_network("10.0.16.0/24"))
    assert p.secondary_cidr is None


def test_a_full_vpc_gets_a_secondary_16() -> None:
    full = [SubnetFact("subnet-big", "10.0.0.0/17", "us-west-2a", 0, {COMPUTE_TAG: "true"}),
            SubnetFact("subnet-big2", "10.0.128.0/17", "us-west-2b", 0, {})]
    p = place_compute_subnet("us-west-2a", full, "10.0.0.0/16",
                             needed_ips=subnet_ips("ml.p5.48xlarge", 100))
    assert p.secondary_cidr == "10.1.0.0/16"
    assert ipaddress.ip_network(str(p.cidr)).subnet_of(ipaddress.IPv4Network("10.1.0.0/16"))
    again = place_compute_subnet("us-west-2a", full, "10.0.0.0/16", needed_ips=100,
                                 vpc_cidrs=("10.1.0.0/16",))
    assert again.secondary_cidr is None and str(again.cidr).startswith("10.1.")


def test_secondary_cidr_skips_ranges_in_use() -> None:
    assert secondary_cidr("10.0.0.0/16", ["10.0.0.0/16", "10.1.0.0/16"]) == "10.2.0.0/16"
    with pytest.raises(InvalidInput):  # 192.168.0.0/16 has no second /16
        secondary_cidr("192.168.0.0/16", ["192.168.0.0/16"])
