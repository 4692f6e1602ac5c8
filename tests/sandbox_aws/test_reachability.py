"""Issue 19: the network decides whether HyperPod nodes join. Each test breaks one piece of the
path AWS needs (docs/sandbox.md, "EC2 networking, slow deletes and reachability") and asserts
what AWS shows: the cluster's status and failure message, the instance's status; then restores
it and shows the next attempt succeeds."""

from __future__ import annotations

from typing import Any

from podplane_sandbox.aws.ec2_lag import NAT_PENDING_SECONDS
from podplane_sandbox.aws.node_network import LIFECYCLE_FAILURE
from podplane_sandbox.aws.reachability import can_reach
from tests.sandbox_aws.conftest import Box, ensure_eks, group, hyperpod_cluster, network

CPU = "ml.m5.xlarge"


def _create(box: Box, name: str, subnet: str, sg: str) -> str:
    hyperpod_cluster(box, name, [group("cpu", CPU, 1)], subnet, sg)
    box.advance(1200)  # launch + lifecycle scripts + roll-back, if any
    return str(box.client("sagemaker").describe_cluster(ClusterName=name)["ClusterStatus"])


def _failure(box: Box, name: str) -> str:
    return str(box.client("sagemaker").describe_cluster(ClusterName=name).get("FailureMessage"))


def _routes(box: Box, subnet: str) -> dict[str, Any]:
    ec2 = box.client("ec2")
    found = ec2.describe_route_tables(Filters=[{"Name": "association.subnet-id",
                                                "Values": [subnet]}])["RouteTables"]
    return dict(found[0])


def test_private_route_table_without_default_route_fails_then_retry_succeeds(box: Box) -> None:
    subnet, sg = network(box)
    rt = _routes(box, subnet)
    nat = next(r["NatGatewayId"] for r in rt["Routes"] if r.get("NatGatewayId"))
    ec2 = box.client("ec2")
    ec2.delete_route(RouteTableId=rt["RouteTableId"], DestinationCidrBlock="0.0.0.0/0")
    assert _create(box, "noroute", subnet, sg) == "Failed"
    assert LIFECYCLE_FAILURE in _failure(box, "noroute")
    ec2.create_route(RouteTableId=rt["RouteTableId"], DestinationCidrBlock="0.0.0.0/0",
                     NatGatewayId=nat)
    assert _create(box, "routed", subnet, sg) == "InService"


def test_nat_deleted_fails_the_create(box: Box) -> None:
    subnet, sg = network(box)
    nat = next(r["NatGatewayId"] for r in _routes(box, subnet)["Routes"]
               if r.get("NatGatewayId"))
    box.client("ec2").delete_nat_gateway(NatGatewayId=nat)
    ok, why = can_reach(box.sandbox.world, subnet, "s3")
    assert not ok and nat in why
    assert _create(box, "nonat", subnet, sg) == "Failed"
    assert LIFECYCLE_FAILURE in _failure(box, "nonat")


def test_internet_gateway_never_attached_fails_until_attached(box: Box) -> None:
    """Issue 19's scenario on the AWS side: AttachInternetGateway never happened."""
    ec2 = box.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    private = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.0.0/20",
                                AvailabilityZone="us-west-2a")["Subnet"]["SubnetId"]
    public = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.16.0/24",
                               AvailabilityZone="us-west-2a")["Subnet"]["SubnetId"]
    sg = ec2.create_security_group(GroupName="n", Description="n", VpcId=vpc)["GroupId"]
    igw = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
    public_rt = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    ec2.associate_route_table(RouteTableId=public_rt, SubnetId=public)
    alloc = ec2.allocate_address(Domain="vpc")["AllocationId"]
    nat = ec2.create_nat_gateway(SubnetId=public, AllocationId=alloc)["NatGateway"]
    box.advance(NAT_PENDING_SECONDS)
    state = ec2.describe_nat_gateways(NatGatewayIds=[nat["NatGatewayId"]])["NatGateways"][0]
    assert state["State"] == "failed"  # Gateway.NotAttached on AWS
    ec2.attach_internet_gateway(InternetGatewayId=igw, VpcId=vpc)
    ec2.create_route(RouteTableId=public_rt, DestinationCidrBlock="0.0.0.0/0", GatewayId=igw)
    nat = ec2.create_nat_gateway(SubnetId=public, AllocationId=alloc)["NatGateway"]
    box.advance(NAT_PENDING_SECONDS)
    private_rt = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    ec2.associate_route_table(RouteTableId=private_rt, SubnetId=private)
    ec2.create_route(RouteTableId=private_rt, DestinationCidrBlock="0.0.0.0/0",
                     NatGatewayId=nat["NatGatewayId"])
    ok, why = can_reach(box.sandbox.world, private, "ecr")
    assert ok, why
    assert _create(box, "attached", private, sg) == "InService"


def test_s3_endpoint_without_nat_reaches_s3_but_not_eks_or_registries(box: Box) -> None:
    ec2 = box.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.0.0/20",
                               AvailabilityZone="us-west-2a")["Subnet"]["SubnetId"]
    sg = ec2.create_security_group(GroupName="n", Description="n", VpcId=vpc)["GroupId"]
    rt = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    ec2.associate_route_table(RouteTableId=rt, SubnetId=subnet)
    world = box.sandbox.world
    assert not can_reach(world, subnet, "s3")[0]
    ec2.create_vpc_endpoint(VpcId=vpc, VpcEndpointType="Gateway", RouteTableIds=[rt],
                            ServiceName="com.amazonaws.us-west-2.s3")
    assert can_reach(world, subnet, "s3")[0]
    for target in ("ecr", "public-registry", "sts"):
        assert not can_reach(world, subnet, target)[0], target
    ensure_eks(box, subnet)
    ok, why = can_reach(world, subnet, "eks", eks_cluster="eks1")
    assert not ok and "public endpoint" in why
    assert _create(box, "s3only", subnet, sg) == "Failed"  # S3 yes, EKS no: never joins


def test_security_group_without_egress_blocks_everything(box: Box) -> None:
    subnet, sg = network(box)
    ec2 = box.client("ec2")
    ec2.revoke_security_group_egress(GroupId=sg, IpPermissions=[
        {"IpProtocol": "-1", "IpRanges": [{"CidrIp": "0.0.0.0/0"}]}])
    ok, why = can_reach(box.sandbox.world, subnet, "s3", security_groups=[sg])
    assert not ok and sg in why


def test_scale_up_with_a_broken_route_replaces_the_instance_until_fixed(box: Box) -> None:
    subnet, sg = network(box)
    hyperpod_cluster(box, "grows", [group("cpu", CPU, 1)], subnet, sg,
                     NodeProvisioningMode="Continuous")
    box.advance(1200)
    rt = _routes(box, subnet)
    nat = next(r["NatGatewayId"] for r in rt["Routes"] if r.get("NatGatewayId"))
    ec2, sm = box.client("ec2"), box.client("sagemaker")
    ec2.delete_route(RouteTableId=rt["RouteTableId"], DestinationCidrBlock="0.0.0.0/0")
    spec = {k: v for k, v in group("cpu", CPU, 2).items() if k != "ThreadsPerCore"}
    sm.update_cluster(ClusterName="grows", InstanceGroups=[{**spec, "ThreadsPerCore": 1}])
    nodes = sm.list_cluster_nodes(ClusterName="grows")["ClusterNodeSummaries"]
    failing = [n for n in nodes if n["InstanceStatus"]["Status"] == "ShuttingDown"]
    assert len(failing) == 1
    assert LIFECYCLE_FAILURE in failing[0]["InstanceStatus"]["Message"]
    box.advance(1200)
    events = sm.list_cluster_events(ClusterName="grows", ResourceType="Instance")["Events"]
    assert {(e["EventLevel"], e["InstanceId"]) for e in events} >= {
        ("Error", failing[0]["InstanceId"])}
    assert all(LIFECYCLE_FAILURE in e["Description"] for e in events if e["EventLevel"] == "Error")
    assert sm.describe_cluster(ClusterName="grows")["ClusterStatus"] == "Updating"
    ec2.create_route(RouteTableId=rt["RouteTableId"], DestinationCidrBlock="0.0.0.0/0",
                     NatGatewayId=nat)
    box.advance(1200)
    assert sm.describe_cluster(ClusterName="grows")["ClusterStatus"] == "InService"
    nodes = sm.list_cluster_nodes(ClusterName="grows")["ClusterNodeSummaries"]
    assert [n["InstanceStatus"]["Status"] for n in nodes] == ["Running", "Running"]


def test_image_pull_gate_follows_the_route(box: Box) -> None:
    """What the sandbox kubelet gets from `KubeView.pull_blocked`: kubelet's error while the
    node's subnet has no way to the registry, nothing once the route is back."""
    subnet, sg = network(box)
    assert _create(box, "pulls", subnet, sg) == "InService"
    view = box.sandbox.kube_view  # the one way Kubernetes asks AWS about the network
    iid = next(iter(box.sandbox.world.service_state("sagemaker")["nodes"]["pulls"]))
    node = {"spec": {"providerID": f"aws:///usw2-az2/sagemaker/cluster/hyperpod-abc-{iid}"}}
    image = "public.ecr.aws/eks-distro/kubernetes/pause:3.9"
    assert view.pull_blocked(node, image) is None
    rt = _routes(box, subnet)
    nat = next(r["NatGatewayId"] for r in rt["Routes"] if r.get("NatGatewayId"))
    ec2 = box.client("ec2")
    ec2.delete_route(RouteTableId=rt["RouteTableId"], DestinationCidrBlock="0.0.0.0/0")
    error = view.pull_blocked(node, image)
    assert error is not None and "i/o timeout" in error and image in error
    ec2.create_route(RouteTableId=rt["RouteTableId"], DestinationCidrBlock="0.0.0.0/0",
                     NatGatewayId=nat)
    assert view.pull_blocked(node, image) is None


def test_mountpoint_needs_a_way_to_s3(box: Box) -> None:
    """What the sandbox kubelet's Mountpoint check gets: an error while the node's subnet has
    neither a NAT path nor an S3 gateway endpoint, nothing once the route is back."""
    subnet, sg = network(box)
    assert _create(box, "mounts", subnet, sg) == "InService"
    view = box.sandbox.kube_view  # the one way Kubernetes asks AWS about the network
    iid = next(iter(box.sandbox.world.service_state("sagemaker")["nodes"]["mounts"]))
    node = {"spec": {"providerID": f"aws:///usw2-az2/sagemaker/cluster/hyperpod-abc-{iid}"}}
    assert view.s3_blocked(node) is None
    rt = _routes(box, subnet)
    nat = next(r["NatGatewayId"] for r in rt["Routes"] if r.get("NatGatewayId"))
    ec2 = box.client("ec2")
    ec2.delete_route(RouteTableId=rt["RouteTableId"], DestinationCidrBlock="0.0.0.0/0")
    error = view.s3_blocked(node)
    assert error is not None and "S3 endpoint unreachable" in error
    ec2.create_route(RouteTableId=rt["RouteTableId"], DestinationCidrBlock="0.0.0.0/0",
                     NatGatewayId=nat)
    assert view.s3_blocked(node) is None
