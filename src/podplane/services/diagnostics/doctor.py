"""`podplane doctor`: what this AWS account lacks for a create, each finding with its fix.

Read-only (a viewer may run it): STS, IAM reads and policy simulation, Service Quotas,
SageMaker and EKS reads. The same service answers REST, MCP and the CLI.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from podplane.domain.catalog import lookup
from podplane.domain.doctor import Finding, Status, worst
from podplane.domain.effects import Effect
from podplane.domain.errors import InvalidInput
from podplane.services.cloud_access import cloud_of
from podplane.services.context import Ctx
from podplane.services.diagnostics import checks
from podplane.services.registry import service
from podplane.store import clusters as cluster_rows


@service(Effect.READ, "doctor.run")
async def run_doctor(ctx: Ctx, instance_type: str | None = None, count: int = 1,
                     cluster: str | None = None) -> dict[str, Any]:
    """Credentials and region, the HyperPod service-linked role, podplane's own permissions,
    the quota for `count` x `instance_type`, and `cluster`'s EKS access entry."""
    if instance_type and lookup(instance_type) is None and not instance_type.startswith("ml."):
        raise InvalidInput(f"{instance_type!r} is not a SageMaker instance type.",
                           field="instance_type")
    aws = cloud_of(ctx.app).aws
    ports = checks.DoctorPorts(aws.account, aws.quotas, aws.hyperpod, aws.eks)
    eks_name = await _eks_name(ctx, cluster) if cluster else None
    findings = await diagnose(ports, instance_type, count, eks_name)
    return {"status": worst(findings).value, "findings": [_out(f) for f in findings]}


async def diagnose(ports: checks.DoctorPorts, instance_type: str | None, count: int,
                   eks_cluster: str | None) -> list[Finding]:
    who, findings = await checks.identity(ports)
    if who is None:
        return findings  # without credentials nothing else can be asked
    permissions, denied = await checks.permissions(ports, who)
    simulated = permissions.status is not Status.WARN  # WARN: the simulation itself failed
    findings.append(await checks.service_linked_role(ports, denied if simulated else None))
    findings.append(permissions)
    if instance_type:
        findings.append(await checks.quota(ports, instance_type, count))
    if eks_cluster:
        findings.append(await checks.access_entry(ports, who, eks_cluster))
    return findings


async def _eks_name(ctx: Ctx, cluster: str) -> str:
    """A managed cluster's EKS name, else `cluster` taken as an EKS cluster's name."""
    async with ctx.app.sessions() as db:
        row = await cluster_rows.get(db, cluster)
    return row.eks_cluster_name if row is not None else cluster


def _out(finding: Finding) -> dict[str, Any]:
    shown = {k: v for k, v in asdict(finding).items() if k != "evidence"}  # doctor has none
    return {**shown, "status": finding.status.value}
