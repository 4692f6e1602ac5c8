"""The control plane's AZ choice: known-refused AZ ids avoided, EKS's offered AZs obeyed."""

from __future__ import annotations

import pytest

from podplane.domain.control_plane_azs import (
    Zone,
    control_plane_azs,
    refused_zone_in,
    valid_zones_in,
)
from podplane.domain.errors import InvalidInput

# us-east-1 as one account sees it: the names map to ids per account (EKS refuses use1-az3)
EAST = [Zone("us-east-1a", "use1-az6"), Zone("us-east-1b", "use1-az1"),
        Zone("us-east-1c", "use1-az2"), Zone("us-east-1d", "use1-az4"),
        Zone("us-east-1e", "use1-az3"), Zone("us-east-1f", "use1-az5")]
WEST = [Zone("us-west-2a", "usw2-az2"), Zone("us-west-2b", "usw2-az1"),
        Zone("us-west-2c", "usw2-az3"), Zone("us-west-2d", "usw2-az4")]
REFUSAL = ("create_cluster: UnsupportedAvailabilityZoneException: Cannot create cluster 'a' "
           "because us-east-1d, the targeted availability zone, does not currently have "
           "sufficient capacity to support the cluster. Retry and choose from these "
           "availability zones: us-east-1a, us-east-1b, us-east-1c")


def test_the_networks_azs_are_kept_when_eks_takes_them() -> None:
    assert control_plane_azs(WEST, ["us-west-2a", "us-west-2b"]) == ["us-west-2a", "us-west-2b"]
    assert control_plane_azs(WEST, ["us-west-2c", "us-west-2a"]) == ["us-west-2c", "us-west-2a"]


def test_a_known_refused_zone_id_is_never_chosen_whatever_its_name() -> None:
    # the compute AZ us-east-1e is use1-az3 here: the control plane goes elsewhere
    assert control_plane_azs(EAST, ["us-east-1e", "us-east-1f"]) == ["us-east-1f", "us-east-1a"]
    renamed = [Zone("us-east-1a", "use1-az3"), *EAST[1:4]]
    assert control_plane_azs(renamed, ["us-east-1a", "us-east-1b"]) == ["us-east-1b",
                                                                         "us-east-1c"]


def test_the_azs_a_refusal_offers_are_obeyed_and_the_refused_one_dropped() -> None:
    offered = valid_zones_in(REFUSAL)
    assert offered == ["us-east-1a", "us-east-1b", "us-east-1c"]
    assert refused_zone_in(REFUSAL) == {"us-east-1d"}
    chosen = control_plane_azs(EAST, ["us-east-1d", "us-east-1b"], valid=offered,
                               refused=frozenset({"us-east-1d"}))
    assert chosen == ["us-east-1b", "us-east-1a"]


def test_other_errors_are_not_refusals() -> None:
    assert valid_zones_in("create_cluster: InvalidParameterException: bad subnet") is None


def test_fewer_than_two_usable_azs_is_a_clear_error() -> None:
    with pytest.raises(InvalidInput) as err:
        control_plane_azs(WEST, ["us-west-2a"], valid=["us-west-2b"])
    assert "two Availability Zones" in err.value.message and "us-west-2b" in err.value.message
