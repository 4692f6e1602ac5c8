"""The full-stack fixture itself: the control plane reaches the sandbox's EKS and Kubernetes."""

from __future__ import annotations

from podplane.services.cloud_access import cloud_of
from podplane_sandbox.aws.iam_rules import LAG_SECONDS
from tests.sandbox_aws.iam_setup import make_role
from tests.stack import Stack


async def test_control_plane_reaches_sandbox_eks_and_kubernetes(stack: Stack) -> None:
    ec2 = stack.aws("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnets = [ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.0.{i}.0/24",
                                 AvailabilityZone=az)["Subnet"]["SubnetId"]
               for i, az in enumerate(["us-west-2a", "us-west-2b"])]
    role = make_role(stack.aws, "smoke-eks", ("eks.amazonaws.com",))
    stack.advance(LAG_SECONDS)
    stack.aws("eks").create_cluster(name="smoke", roleArn=role,
                                    resourcesVpcConfig={"subnetIds": subnets})
    stack.advance(15 * 60)
    cloud = cloud_of(stack.app.state.podplane)
    kube = await cloud.kube_for("smoke")
    namespaces = {n["metadata"]["name"] for n in await kube.list("v1", "Namespace")}
    assert "kube-system" in namespaces
    assert [e["action"] for e in stack.ledger(service="eks")] == ["CreateCluster"]
    assert "kube-system" in stack.kubectl("get", "namespaces", "-o", "name")
