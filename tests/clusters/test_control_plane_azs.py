"""EKS refuses the AZ podplane would put the control plane in: the create still finishes, in
AZs EKS takes, and the cluster's facts name the subnets EKS really got."""

from __future__ import annotations

import json

from podplane.services.clusters.state import facts_of
from tests.clusters.helpers import BODY, wait_done
from tests.clusters.test_create import aws_cli
from tests.stack import Stack


async def test_create_retries_eks_in_the_azs_its_refusal_offers(stack: Stack) -> None:
    # us-west-2a (usw2-az2) is the compute AZ, so podplane's first choice for the control plane
    stack.sandbox.box.eks.refuse_zones(["usw2-az2"])
    async with stack.client("operator") as api:
        r = await api.post("/api/v1/clusters", json=BODY)
        assert r.status_code == 202, r.text
        done = await wait_done(api, r.json()["id"])
    assert done["status"] == "succeeded", json.dumps(done["steps"], indent=1)

    vpc_config = aws_cli(stack, "eks", "describe-cluster", "--name", "alpha")["cluster"][
        "resourcesVpcConfig"]
    subnets = stack.aws("ec2").describe_subnets(SubnetIds=vpc_config["subnetIds"])["Subnets"]
    azs = {s["AvailabilityZone"] for s in subnets}
    assert "us-west-2a" not in azs and len(azs) == 2
    facts = await facts_of(stack.app.state.podplane, "alpha")
    assert sorted(facts["control_plane"]["subnets"]) == sorted(vpc_config["subnetIds"])
    assert facts["control_plane"]["availability_zones"] == sorted(azs)
    assert len(stack.ledger(service="eks", action="CreateCluster")) == 1
    # the nodes still run where the user asked
    hp = stack.aws("sagemaker").list_cluster_nodes(ClusterName="alpha")["ClusterNodeSummaries"]
    assert len(hp) == 2

    async with stack.client("admin") as admin:  # the subnet made for EKS goes with the rest
        r = await admin.delete("/api/v1/clusters/alpha", params={"confirm": "true"})
        assert r.status_code == 202, r.text
        assert (await wait_done(admin, r.json()["id"]))["status"] == "succeeded"
    mine = [{"Name": "tag:podplane:cluster", "Values": ["alpha"]}]
    assert stack.aws("ec2").describe_subnets(Filters=mine)["Subnets"] == []
