"""EC2 lifecycles that moto makes instant, as AWS shows them (docs/sandbox.md, "EC2 networking,
slow deletes and reachability").

- NAT gateways: `pending` then `available`, and after DeleteNatGateway `deleting` then `deleted`;
  a just-created NAT is briefly unknown to the API (eventual consistency).
- VPC endpoints: `deleting` before `deleted`.
- ENIs that AWS services keep in the customer's subnets (EKS control-plane ENIs, HyperPod
  instance ENIs): they exist while their owner does and linger a few minutes after it is gone,
  as real ENIs do. They are real moto ENIs, so DescribeNetworkInterfaces shows them.

Timings apply in lag mode (`World.lag`); without it transitions are immediate, but the state
machine (and the dependency rules in `ec2_rules`) stays the same.
"""

from __future__ import annotations

from typing import Any

from moto.backends import get_backend

from podplane_sandbox.aws.world import ACCOUNT, World

NAT_HIDDEN_SECONDS = 20.0     # unknown by id just after CreateNatGateway (boto3#779, kops#944)
NAT_PENDING_SECONDS = 120.0   # pending -> available: minutes on AWS (kops#944: "up to 5 min")
NAT_DELETING_SECONDS = 300.0  # deleting -> deleted: minutes (aws-sdk#61, aws-sdk-go#1648)
ENDPOINT_DELETING_SECONDS = {"gateway": 30.0, "interface": 180.0}  # cloud-nuke#293
ENI_LINGER_SECONDS = 300.0    # requester-managed ENIs outlive their owner (tf-provider-aws#9495)
LIVE = ("pending", "available", "deleting")


def ec2_backend(world: World) -> Any:
    return get_backend("ec2")[ACCOUNT][world.region]  # type: ignore[call-overload]


def existing_ec2(world: World) -> Any:
    """moto's EC2 backend if EC2 was used already; never builds one (that is slow)."""
    accounts = get_backend("ec2")  # type: ignore[call-overload]
    account = dict.get(accounts, ACCOUNT)
    return dict.get(account, world.region) if account is not None else None


class Ec2Lag:
    def __init__(self, world: World) -> None:
        self.w = world
        world.on_tick(self.tick)

    @property
    def s(self) -> dict[str, Any]:
        st = self.w.service_state("ec2")
        for key in ("nat_hidden", "nat_pending", "nat_deleting", "vpce_deleting", "enis"):
            st.setdefault(key, {})
        return st

    def delay(self, seconds: float) -> float:
        return self.w.now() + (seconds if self.w.lag else 0.0)

    # transitions started by requests --------------------------------------------------------
    def nat_created(self, nat: Any) -> None:
        nat.state = "pending"
        self.s["nat_hidden"][nat.id] = self.delay(NAT_HIDDEN_SECONDS)
        self.s["nat_pending"][nat.id] = self.delay(NAT_PENDING_SECONDS)
        self.tick(self.w.now())

    def nat_deleted(self, nat: Any) -> None:
        if nat.id in self.s["nat_deleting"]:
            nat.state = "deleting"
            return
        self.s["nat_pending"].pop(nat.id, None)
        nat.state = "deleting"
        self.s["nat_deleting"][nat.id] = self.delay(NAT_DELETING_SECONDS)
        self.tick(self.w.now())

    def endpoint_deleted(self, vpce: Any) -> None:
        kind = str(vpce.vpc_endpoint_type or "gateway").lower()
        self.s["vpce_deleting"].setdefault(
            vpce.id, self.delay(ENDPOINT_DELETING_SECONDS.get(kind, 180.0)))
        vpce.state = "deleting"
        self.tick(self.w.now())

    def nat_hidden(self, nat_id: str) -> bool:
        return self.w.now() < self.s["nat_hidden"].get(nat_id, 0.0)

    # the ticker ----------------------------------------------------------------------------
    def tick(self, now: float) -> None:
        ec2 = existing_ec2(self.w)
        if ec2 is None:
            return
        st = self.s
        for nat_id, at in list(st["nat_hidden"].items()):
            if now >= at:
                del st["nat_hidden"][nat_id]
        for nat_id, at in list(st["nat_pending"].items()):
            if now >= at:
                del st["nat_pending"][nat_id]
                nat = ec2.nat_gateways.get(nat_id)
                if nat is not None and nat.state == "pending":
                    nat.state = "available" if _has_way_out(ec2, nat) else "failed"
        for nat_id, at in list(st["nat_deleting"].items()):
            if now >= at:
                del st["nat_deleting"][nat_id]
                nat = ec2.nat_gateways.get(nat_id)
                if nat is not None:
                    nat.state = "deleted"
        for vpce_id, at in list(st["vpce_deleting"].items()):
            if now >= at:
                del st["vpce_deleting"][vpce_id]
                if vpce_id in ec2.vpc_end_points:
                    ec2.vpc_end_points[vpce_id].state = "deleted"
        _release_deleted_nat_enis(ec2)
        self._service_enis(ec2, now)

    def _service_enis(self, ec2: Any, now: float) -> None:
        """Create the ENIs of live EKS / HyperPod clusters; drop them a while after the owner."""
        owners = _owners(self.w)
        enis: dict[str, Any] = self.s["enis"]
        for key, (subnets, groups, description) in owners.items():
            entry = enis.setdefault(key, {"ids": [], "gone": None})
            entry["gone"] = None
            if not entry["ids"]:
                entry["ids"] = _create_enis(ec2, subnets, groups, description)
        linger = ENI_LINGER_SECONDS if self.w.lag else 0.0
        for key, entry in list(enis.items()):
            if key in owners:
                continue
            if entry["gone"] is None:
                entry["gone"] = now
            if now >= entry["gone"] + linger:
                for eni_id in entry["ids"]:
                    ec2.enis.pop(eni_id, None)
                del enis[key]


def _owners(world: World) -> dict[str, tuple[list[str], list[str], str]]:
    """Who holds ENIs in which subnets: EKS clusters and HyperPod clusters that exist."""
    out: dict[str, tuple[list[str], list[str], str]] = {}
    for name, c in world.service_state("eks").get("clusters", {}).items():
        vpc = c.get("resourcesVpcConfig", {})
        out[f"eks/{name}"] = (list(vpc.get("subnetIds", [])),
                              list(vpc.get("securityGroupIds", [])), f"Amazon EKS {name}")
    for name, c in world.service_state("sagemaker").get("clusters", {}).items():
        vpc = c.get("VpcConfig") or {}
        out[f"hyperpod/{name}"] = (list(vpc.get("Subnets", [])),
                                   list(vpc.get("SecurityGroupIds", [])),
                                   f"SageMaker HyperPod cluster {name}")
    return out


def _create_enis(ec2: Any, subnets: list[str], groups: list[str], description: str) -> list[str]:
    ids = []
    for subnet_id in subnets:
        subnet = find_subnet(ec2, subnet_id)
        if subnet is None:  # a subnet moto does not hold: nothing to block
            continue
        known = [g for g in groups if ec2.get_security_group_from_id(g) is not None]
        eni = ec2.create_network_interface(subnet, None, group_ids=known or None,
                                           description=description)
        ids.append(eni.id)
    return ids


def find_subnet(ec2: Any, subnet_id: str) -> Any:
    for by_az in ec2.subnets.values():
        if subnet_id in by_az:
            return by_az[subnet_id]
    return None


def _has_way_out(ec2: Any, nat: Any) -> bool:
    """A public NAT gateway fails (`Gateway.NotAttached`) in a VPC with no internet gateway
    attached (EC2 API reference, NatGateway FailureCode)."""
    return nat.connectivity_type == "private" or any(
        g.vpc is not None and g.vpc.id == nat.vpc_id for g in ec2.internet_gateways.values())


def _release_deleted_nat_enis(ec2: Any) -> None:
    """A deleted or failed NAT gives back its ENI and Elastic IP (moto keeps both)."""
    for nat in ec2.nat_gateways.values():
        eni = getattr(nat, "_eni", None)
        if nat.state not in ("deleted", "failed") or eni is None or eni.id not in ec2.enis:
            continue
        for eip in ec2.addresses:
            if eip.eni is not None and eip.eni.id == eni.id:
                eip.eni, eip.association_id, eip.instance = None, None, None
        ec2.enis.pop(eni.id, None)
