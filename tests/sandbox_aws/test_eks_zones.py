"""EKS CreateCluster refuses control-plane subnets in AZs that take no cluster
(UnsupportedAvailabilityZoneException with `validZones`, as botocore's eks model defines it)."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from tests.sandbox_aws.conftest import ROLE, Box, network, second_subnet


def test_a_refused_az_gets_the_real_error_shape_and_nothing_is_created(box: Box) -> None:
    eks = box.client("eks")
    subnet_a, _ = network(box, az="us-west-2a")
    subnet_b = second_subnet(box, az="us-west-2b")
    box.sandbox.eks.refuse_zones(["usw2-az2"])  # the zone id of us-west-2a in this account
    with pytest.raises(ClientError) as err:
        eks.create_cluster(name="zoned", roleArn=ROLE,
                           resourcesVpcConfig={"subnetIds": [subnet_a, subnet_b]})
    response = err.value.response
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert response["Error"]["Code"] == "UnsupportedAvailabilityZoneException"
    assert isinstance(err.value, eks.exceptions.UnsupportedAvailabilityZoneException)
    assert response["validZones"] == ["us-west-2b", "us-west-2c", "us-west-2d"]
    assert response["clusterName"] == "zoned"
    assert "us-west-2a, the targeted availability zone" in response["Error"]["Message"]
    assert eks.list_clusters()["clusters"] == []
    assert box.ledger(service="eks", action="CreateCluster") == []

    ec2 = box.client("ec2")
    vpc = ec2.describe_subnets(SubnetIds=[subnet_b])["Subnets"][0]["VpcId"]
    subnet_c = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.32.0/24",
                                 AvailabilityZone="us-west-2c")["Subnet"]["SubnetId"]
    made = eks.create_cluster(name="zoned", roleArn=ROLE,
                              resourcesVpcConfig={"subnetIds": [subnet_b, subnet_c]})
    assert made["cluster"]["resourcesVpcConfig"]["subnetIds"] == [subnet_b, subnet_c]


def test_zones_can_be_named_by_name_too(box: Box) -> None:
    eks = box.client("eks")
    subnet_a, _ = network(box, az="us-west-2a")
    subnet_b = second_subnet(box, az="us-west-2b")
    box.sandbox.eks.refuse_zones(["us-west-2b"])
    with pytest.raises(eks.exceptions.UnsupportedAvailabilityZoneException) as err:
        eks.create_cluster(name="named", roleArn=ROLE,
                           resourcesVpcConfig={"subnetIds": [subnet_a, subnet_b]})
    assert err.value.response["validZones"] == ["us-west-2a", "us-west-2c", "us-west-2d"]
