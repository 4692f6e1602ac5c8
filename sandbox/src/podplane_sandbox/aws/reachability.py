"""Can an instance in a subnet reach an AWS endpoint? Derived from the EC2 state moto holds, the
way VPC routing decides it (docs/sandbox.md, "EC2 networking, slow deletes and reachability"):

- the subnet's route table is its explicit association, else the VPC's main table (VPC docs,
  "Route tables");
- the internet is reached through a 0.0.0.0/0 route to an `available` NAT gateway whose own
  subnet routes 0.0.0.0/0 to an internet gateway attached to the VPC (NAT gateway docs), or
  straight to an attached internet gateway for instances with a public IP (HyperPod instances
  get none);
- S3 is reached through a gateway endpoint on the route table, else the internet;
- ECR needs the `ecr.api` and `ecr.dkr` interface endpoints plus S3 (image layers), else the
  internet; STS its interface endpoint, else the internet; public registries only the internet;
- the EKS API through the private endpoint from inside the cluster's VPC, else the public
  endpoint over the internet (EKS "Cluster API server endpoint" docs);
- and the instance's security groups must allow the outbound traffic.

Evaluated when it matters (instance launch, image pull, mount), so a fixed route helps the next
attempt. Other sandbox parts call `can_reach`.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from podplane_sandbox.aws.ec2_lag import existing_ec2, find_subnet
from podplane_sandbox.aws.world import World

TARGETS = ("eks", "ecr", "public-registry", "s3", "sts")
Verdict = tuple[bool, str]


def can_reach(world: World, subnet_id: str, target: str, *,
              security_groups: list[str] | None = None,
              eks_cluster: str | None = None) -> Verdict:
    """(reachable, why). Subnets moto does not hold are not judged here (True)."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}; one of {TARGETS}")
    ec2 = existing_ec2(world)
    subnet = find_subnet(ec2, subnet_id) if ec2 is not None else None
    if subnet is None:
        return True, f"subnet {subnet_id} is not modelled by the sandbox's EC2"
    egress = _egress(ec2, security_groups or [])
    if egress is not None:
        return False, egress
    rt = route_table_of(ec2, subnet)
    if target == "eks":
        return _eks(world, ec2, subnet, rt, eks_cluster)
    if target == "s3" and _gateway_endpoint(ec2, world, rt, "s3"):
        return True, f"S3 gateway endpoint on {_rt_name(rt)}"
    if target == "ecr" and _interface(ec2, world, subnet, "ecr.api") and \
            _interface(ec2, world, subnet, "ecr.dkr") and \
            _gateway_endpoint(ec2, world, rt, "s3"):
        return True, "ECR interface endpoints and the S3 gateway endpoint"
    if target == "sts" and _interface(ec2, world, subnet, "sts"):
        return True, "STS interface endpoint"
    return internet(ec2, subnet, rt)


def route_table_of(ec2: Any, subnet: Any) -> Any:
    tables = [t for t in ec2.route_tables.values() if t.vpc_id == subnet.vpc_id]
    for t in tables:
        if subnet.id in t._associations.values():
            return t
    main = [t for t in tables if t.main_association_id is not None]
    return main[0] if main else None


def internet(ec2: Any, subnet: Any, rt: Any) -> Verdict:
    default = _default_route(rt)
    if default is None:
        return False, (f"route table {_rt_name(rt)} of subnet {subnet.id} has no 0.0.0.0/0 "
                       "route (no NAT gateway or internet gateway path)")
    if default.nat_gateway is not None:
        return _via_nat(ec2, default.nat_gateway)
    igw = default.gateway
    if igw is not None and str(igw.id).startswith("igw-"):
        if not _attached(igw, subnet.vpc_id):
            return False, f"internet gateway {igw.id} is not attached to {subnet.vpc_id}"
        if not getattr(subnet, "map_public_ip_on_launch", False):
            return False, (f"subnet {subnet.id} routes to internet gateway {igw.id}, but its "
                           "instances have no public IP; use a NAT gateway")
        return True, f"internet gateway {igw.id}"
    return False, f"the 0.0.0.0/0 route of {_rt_name(rt)} leads to no NAT or internet gateway"


def _via_nat(ec2: Any, nat: Any) -> Verdict:
    if nat.state != "available":
        return False, f"NAT gateway {nat.id} is {nat.state}"
    nat_subnet = find_subnet(ec2, nat.subnet_id)
    if nat_subnet is None:
        return False, f"NAT gateway {nat.id} has no subnet"
    default = _default_route(route_table_of(ec2, nat_subnet))
    igw = default.gateway if default is not None else None
    if igw is None or not str(igw.id).startswith("igw-"):
        return False, (f"NAT gateway {nat.id}'s subnet {nat_subnet.id} has no 0.0.0.0/0 route "
                       "to an internet gateway")
    if not _attached(igw, nat_subnet.vpc_id):
        return False, (f"internet gateway {igw.id} is not attached to {nat_subnet.vpc_id}, so "
                       f"NAT gateway {nat.id} has no way out")
    return True, f"NAT gateway {nat.id} and internet gateway {igw.id}"


def _eks(world: World, ec2: Any, subnet: Any, rt: Any, name: str | None) -> Verdict:
    clusters = world.service_state("eks").get("clusters", {})
    cluster = clusters.get(name) if name else None
    if cluster is None:
        return False, f"EKS cluster {name} does not exist"
    vpc = cluster.get("resourcesVpcConfig", {})
    in_vpc = {_vpc_of(ec2, s) for s in vpc.get("subnetIds", [])}
    if vpc.get("endpointPrivateAccess") and subnet.vpc_id in in_vpc:
        return True, "the EKS private endpoint in the VPC"
    if not vpc.get("endpointPublicAccess", True):
        return False, (f"EKS cluster {name} has only a private endpoint, which subnet "
                       f"{subnet.id} in {subnet.vpc_id} cannot use")
    ok, why = internet(ec2, subnet, rt)
    if not ok:
        return False, f"the EKS public endpoint needs the internet: {why}"
    cidrs = vpc.get("publicAccessCidrs") or ["0.0.0.0/0"]
    if "0.0.0.0/0" not in cidrs and not _nat_ip_allowed(ec2, rt, cidrs):
        return False, f"EKS publicAccessCidrs {cidrs} do not include the NAT's address"
    return True, f"the EKS public endpoint via {why}"


def _nat_ip_allowed(ec2: Any, rt: Any, cidrs: list[str]) -> bool:
    default = _default_route(rt)
    nat = default.nat_gateway if default is not None else None
    ips = [a.public_ip for a in ec2.addresses if nat is not None and a.eni is not None
           and a.eni is getattr(nat, "_eni", None)]
    return any(ipaddress.ip_address(ip) in ipaddress.ip_network(c) for ip in ips for c in cidrs)


def _egress(ec2: Any, groups: list[str]) -> str | None:
    """None when some group allows outbound HTTPS anywhere (or no group is known)."""
    found = [g for g in (ec2.get_security_group_from_id(gid) for gid in groups) if g]
    if not found:
        return None
    for group in found:
        for rule in group.egress_rules:
            ports_ok = rule.ip_protocol == "-1" or (
                rule.ip_protocol == "tcp" and (rule.from_port or 0) <= 443 <= (rule.to_port or 0))
            if ports_ok and rule.ip_range.get("CidrIp") == "0.0.0.0/0":
                return None
    return (f"security groups {', '.join(g.id for g in found)} allow no outbound HTTPS to "
            "0.0.0.0/0")


def _default_route(rt: Any) -> Any:
    if rt is None:
        return None
    for route in rt.routes:
        if route.destination_cidr_block == "0.0.0.0/0":
            return route
    return None


def _gateway_endpoint(ec2: Any, world: World, rt: Any, service: str) -> bool:
    name = f"com.amazonaws.{world.region}.{service}"
    return rt is not None and any(
        e.service_name == name and e.state == "available" and rt.id in (e.route_table_ids or [])
        for e in ec2.vpc_end_points.values())


def _interface(ec2: Any, world: World, subnet: Any, service: str) -> bool:
    name = f"com.amazonaws.{world.region}.{service}"
    return any(e.service_name == name and e.state == "available" and e.vpc_id == subnet.vpc_id
               and str(e.vpc_endpoint_type).lower() == "interface"
               for e in ec2.vpc_end_points.values())


def _attached(igw: Any, vpc_id: str) -> bool:
    return igw.vpc is not None and igw.vpc.id == vpc_id


def _vpc_of(ec2: Any, subnet_id: str) -> str | None:
    subnet = find_subnet(ec2, subnet_id)
    return subnet.vpc_id if subnet is not None else None


def _rt_name(rt: Any) -> str:
    return str(rt.id) if rt is not None else "(none)"
