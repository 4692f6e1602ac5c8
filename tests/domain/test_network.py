"""The capacity-path function and the VPC layout."""

from __future__ import annotations

import ipaddress

import pytest

from podplane.domain.errors import InvalidInput
from podplane.domain.network import (
    COMPUTE_TAG,
    SubnetFact,
    next_free_block,
    place_compute_subnet,
    plan_vpc,
)

AZS = ["us-west-2a", "us-west-2b", "us-west-2c"]


def compute(sid: str, cidr: str, az: str, free: int) -> SubnetFact:
    return SubnetFact(sid, cidr, az, free, {COMPUTE_TAG: "true"})


def test_vpc_layout_has_no_overlaps_and_a_20_in_the_chosen_az() -> None:
    layout = plan_vpc("us-west-2b", AZS)
    blocks = [ipaddress.ip_network(c) for _, c in layout.public + layout.private]
    blocks.append(ipaddress.ip_network(layout.compute[1]))
    assert all(not a.overlaps(b) for i, a in enumerate(blocks) for b in blocks[i + 1:])
    assert layout.compute[0] == "us-west-2b"
    assert ipaddress.ip_network(layout.compute[1]).prefixlen == 20
    assert {az for az, _ in layout.private} == {"us-west-2b", "us-west-2a"}


def test_unknown_az_is_refused_with_the_choices() -> None:
    with pytest.raises(InvalidInput) as err:
        plan_vpc("us-west-2z", AZS)
    assert "us-west-2a" in (err.value.hint or "")


def test_reuses_the_az_compute_subnet_with_room() -> None:
    subnets = [compute("subnet-a", "10.0.0.0/20", "us-west-2a", 4000),
               compute("subnet-b", "10.0.16.0/20", "us-west-2b", 4000)]
    p = place_compute_subnet("us-west-2b", subnets, "10.0.0.0/16", needed_ips=100)
    assert (p.action, p.subnet_id) == ("reuse", "subnet-b")


def test_creates_a_new_20_when_the_az_subnet_is_full() -> None:
    subnets = [compute("subnet-a", "10.0.0.0/20", "us-west-2a", 10)]
    p = place_compute_subnet("us-west-2a", subnets, "10.0.0.0/16", needed_ips=100)
    assert p.action == "create"
    assert p.cidr == "10.0.16.0/20"


def test_a_plain_subnet_is_never_taken_for_compute() -> None:
    plain = SubnetFact("subnet-p", "10.0.0.0/20", "us-west-2a", 4000, {})
    p = place_compute_subnet("us-west-2a", [plain], "10.0.0.0/16", needed_ips=1)
    assert p.action == "create"


def test_explicit_subnet_in_another_az_is_refused() -> None:
    subnets = [compute("subnet-a", "10.0.0.0/20", "us-west-2a", 4000)]
    with pytest.raises(InvalidInput):
        place_compute_subnet("us-west-2b", subnets, "10.0.0.0/16", needed_ips=1,
                             explicit_subnet_id="subnet-a")


def test_full_vpc_says_so() -> None:
    with pytest.raises(InvalidInput) as err:
        next_free_block("10.0.0.0/20", ["10.0.0.0/20"], 20)
    assert "no free /20" in err.value.message
