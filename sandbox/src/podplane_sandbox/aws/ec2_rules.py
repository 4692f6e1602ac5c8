"""EC2 rules moto does not enforce, applied around moto's WSGI app (docs/sandbox.md, "EC2
networking, slow deletes and reachability"): what AWS refuses while a dependency remains, and
the lifecycles of `ec2_lag`.

Refusals (always on; lag mode only makes the dependencies last longer):
- ReleaseAddress of an Elastic IP a NAT gateway still holds: `AuthFailure` (kops#1604, grafiti#89).
- DeleteSubnet / DeleteSecurityGroup / DeleteVpc with ENIs, NAT gateways or VPC endpoints left,
  DetachInternetGateway while a NAT gateway maps public addresses: `DependencyViolation`.
- A just-created NAT gateway is unknown by id for a few seconds (boto3#779, kops#944/#9052).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qs

from podplane_sandbox.aws.ec2_lag import LIVE, Ec2Lag, ec2_backend
from podplane_sandbox.aws.moto_faults import _render
from podplane_sandbox.aws.world import World

Refusal = tuple[str, str]  # (code, message)


class Ec2Rules:
    """Wraps moto's WSGI app; only EC2 Query requests are looked at."""

    def __init__(self, world: World, moto_app: Any) -> None:
        self.w, self.moto_app = world, moto_app
        self.lag = Ec2Lag(world)

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        form = _ec2_form(environ)
        if form is None:
            return list(self.moto_app(environ, start_response))
        self.w.tick()
        action = form.get("Action", "")
        refused = self.refusal(action, form)
        if refused is not None:
            status, headers, body = _render("ec2", refused[0], refused[1], 400)
            start_response("400 Bad Request", list(headers.items()))
            return [body]
        before = set(ec2_backend(self.w).nat_gateways)
        out = list(self.moto_app(environ, start_response))
        self.after(action, form, before)
        return out

    # before moto -------------------------------------------------------------------------
    def refusal(self, action: str, form: dict[str, str]) -> Refusal | None:
        ec2 = ec2_backend(self.w)
        check = {"ReleaseAddress": _release_address, "DeleteSubnet": _delete_subnet,
                 "DeleteSecurityGroup": _delete_security_group, "DeleteVpc": _delete_vpc,
                 "DetachInternetGateway": _detach_igw}.get(action)
        if check is not None:
            return check(ec2, form)
        if action == "DescribeNatGateways":
            for nat_id in _listed(form, "NatGatewayId"):
                if self.lag.nat_hidden(nat_id):
                    return "NatGatewayNotFound", f"NAT gateway {nat_id} was not found"
        if action in ("CreateRoute", "ReplaceRoute") and self.lag.nat_hidden(
                form.get("NatGatewayId", "")):
            return ("InvalidNatGatewayID.NotFound",
                    f"The natGateway ID '{form['NatGatewayId']}' does not exist")
        return None

    # after moto --------------------------------------------------------------------------
    def after(self, action: str, form: dict[str, str], before: set[str]) -> None:
        ec2 = ec2_backend(self.w)
        if action == "CreateNatGateway":
            for nat_id in set(ec2.nat_gateways) - before:
                self.lag.nat_created(ec2.nat_gateways[nat_id])
        elif action == "DeleteNatGateway":
            nat = ec2.nat_gateways.get(form.get("NatGatewayId", ""))
            if nat is not None:
                self.lag.nat_deleted(nat)
        elif action == "DeleteVpcEndpoints":
            for vpce_id in _listed(form, "VpcEndpointId"):
                if vpce_id in ec2.vpc_end_points:
                    self.lag.endpoint_deleted(ec2.vpc_end_points[vpce_id])


def _ec2_form(environ: dict[str, Any]) -> dict[str, str] | None:
    """The Query form of an EC2 request (first value of each key), or None for other services."""
    if "/ec2/aws4_request" not in environ.get("HTTP_AUTHORIZATION", ""):
        return None
    raw = environ["wsgi.input"].read()
    environ["wsgi.input"].seek(0)
    form = parse_qs(raw.decode("utf-8", "replace"))
    form.update(parse_qs(environ.get("QUERY_STRING", "")))
    return {k: v[0] for k, v in form.items()}


def _listed(form: dict[str, str], member: str) -> list[str]:
    return [v for k, v in form.items() if k.startswith(member + ".")]


def _live_nats(ec2: Any, **where: str) -> list[Any]:
    return [n for n in ec2.nat_gateways.values() if n.state in LIVE
            and all(getattr(n, k) == v for k, v in where.items())]


def _live_endpoints(ec2: Any, vpc_id: str) -> list[Any]:
    return [e for e in ec2.vpc_end_points.values()
            if e.vpc_id == vpc_id and e.state != "deleted"]


def _release_address(ec2: Any, form: dict[str, str]) -> Refusal | None:
    alloc, ip = form.get("AllocationId"), form.get("PublicIp")
    for eip in ec2.addresses:
        if (alloc and eip.allocation_id == alloc) or (ip and eip.public_ip == ip):
            held = [n for n in _live_nats(ec2) if eip.eni is not None
                    and getattr(n, "_eni", None) is eip.eni]
            if held:  # AWS's answer while the NAT is not yet deleted (kops#1604, grafiti#89)
                return "AuthFailure", "You do not have permission to access the specified resource."
    return None


def _delete_subnet(ec2: Any, form: dict[str, str]) -> Refusal | None:
    subnet_id = form.get("SubnetId", "")
    busy = [e for e in ec2.enis.values() if e.subnet.id == subnet_id] or \
        _live_nats(ec2, subnet_id=subnet_id) or \
        [e for e in ec2.vpc_end_points.values()
         if e.state != "deleted" and subnet_id in (e.subnet_ids or [])]
    if busy:
        return ("DependencyViolation",
                f"The subnet '{subnet_id}' has dependencies and cannot be deleted.")
    return None


def _delete_security_group(ec2: Any, form: dict[str, str]) -> Refusal | None:
    group_id = form.get("GroupId", "")
    if any(group_id in [g.id for g in e._group_set] for e in ec2.enis.values()):
        return "DependencyViolation", f"resource {group_id} has a dependent object"
    return None


def _delete_vpc(ec2: Any, form: dict[str, str]) -> Refusal | None:
    vpc_id = form.get("VpcId", "")
    attached = [g for g in ec2.internet_gateways.values() if g.vpc and g.vpc.id == vpc_id]
    enis = [e for e in ec2.enis.values() if e.subnet.vpc_id == vpc_id]
    if attached or enis or _live_nats(ec2, vpc_id=vpc_id) or _live_endpoints(ec2, vpc_id):
        return "DependencyViolation", f"The vpc '{vpc_id}' has dependencies and cannot be deleted."
    return None


def _detach_igw(ec2: Any, form: dict[str, str]) -> Refusal | None:
    vpc_id = form.get("VpcId", "")
    if [n for n in _live_nats(ec2, vpc_id=vpc_id) if n.connectivity_type != "private"]:
        return ("DependencyViolation", f"Network {vpc_id} has some mapped public address(es). "
                "Please unmap those public address(es) before detaching the gateway.")
    return None
