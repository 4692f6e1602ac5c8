"""Inspect before create: what exists and what is valid, read from the cloud (read-only).

The answers are TypedDicts: typed for every caller (the create steps index them by key) and
the JSON the API answers, field for field (api/routers/cluster_shapes.py)."""

from __future__ import annotations

from typing import Any, TypedDict

from podplane.domain.catalog import CATALOG, lookup
from podplane.domain.effects import Effect
from podplane.domain.errors import InvalidInput
from podplane.domain.preflight import CapacityFacts
from podplane.services.cloud_access import Cloud, cloud_of
from podplane.services.context import Ctx
from podplane.services.registry import service


class Zone(TypedDict):
    name: str
    id: str
    state: str
    region: str


class Quota(TypedDict):
    instance_type: str
    quota_name: str
    limit: int | None
    in_use: int
    source: str | None
    available: int | None


class TrainingPlan(TypedDict):
    arn: str
    name: str | None
    status: str | None
    instance_type: str | None
    availability_zone: str | None
    total_instances: int | None
    available_instances: int | None
    start_time: str | None
    end_time: str | None


class InstanceType(TypedDict):
    name: str
    vcpu: int
    memory_gib: int
    gpu_model: str | None
    gpu_count: int
    gpu_memory_gib: int
    efa_interfaces: int
    price_per_hour: float
    accelerated: bool
    offered_in: list[str]


async def availability_zones(cloud: Cloud) -> list[Zone]:
    zones = await cloud.aws.ec2.availability_zones()
    return [Zone(name=z["ZoneName"], id=z["ZoneId"], state=z.get("State", "available"),
                 region=z.get("RegionName", cloud.aws.region))
            for z in sorted(zones, key=lambda z: z["ZoneName"])]


async def offered_azs(cloud: Cloud, types: list[str]) -> dict[str, list[str]]:
    """ml.<type> -> the AZs whose EC2 offering includes the type."""
    out: dict[str, list[str]] = {t: [] for t in types}
    for offer in await cloud.aws.ec2.instance_type_offerings(types):
        name = f"ml.{offer['InstanceType']}"
        if name in out:
            out[name].append(offer["Location"])
    return {t: sorted(azs) for t, azs in out.items()}


async def usage_by_type(cloud: Cloud) -> dict[str, int]:
    """Instances HyperPod clusters in the account hold (what the quota counts)."""
    used: dict[str, int] = {}
    for summary in await cloud.aws.hyperpod.list_clusters():
        if summary.get("ClusterStatus") in ("Failed", "Deleting"):
            continue
        described = await cloud.aws.hyperpod.describe_cluster(summary["ClusterName"])
        for group in (described or {}).get("InstanceGroups", []):
            count = int(group.get("TargetCount", group.get("CurrentCount", 0)))
            used[group["InstanceType"]] = used.get(group["InstanceType"], 0) + count
    return used


async def quota(cloud: Cloud, instance_type: str) -> Quota:
    found = await cloud.aws.quotas.cluster_quota(instance_type)
    limit = None if found is None else int(found["value"])
    used = (await usage_by_type(cloud)).get(instance_type, 0)
    return Quota(instance_type=instance_type, quota_name=f"{instance_type} for cluster usage",
                 limit=limit, in_use=used, source=None if found is None else found["source"],
                 available=None if limit is None else max(0, limit - used))


async def training_plans(cloud: Cloud) -> list[TrainingPlan]:
    out = []
    for plan in await cloud.aws.hyperpod.list_training_plans():
        reserved = (plan.get("ReservedCapacitySummaries") or [{}])[0]
        out.append(TrainingPlan(
            arn=plan["TrainingPlanArn"], name=plan.get("TrainingPlanName"),
            status=plan.get("Status"), instance_type=reserved.get("InstanceType"),
            availability_zone=reserved.get("AvailabilityZone"),
            total_instances=plan.get("TotalInstanceCount"),
            available_instances=plan.get("AvailableInstanceCount"),
            start_time=_iso(plan.get("StartTime")), end_time=_iso(plan.get("EndTime"))))
    return out


def _iso(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else value


async def capacity_facts(cloud: Cloud, instance_type: str, az: str, count: int,
                         plan_arn: str | None) -> CapacityFacts:
    offered = (await offered_azs(cloud, [instance_type]))[instance_type]
    q = await quota(cloud, instance_type)
    plan_az = plan_count = None
    if plan_arn:
        plan = next((p for p in await training_plans(cloud) if p["arn"] == plan_arn), None)
        if plan is None:
            raise InvalidInput(f"Training plan {plan_arn} was not found in this account.",
                               hint="List plans with training_plan_list (GET "
                               "/api/v1/training-plans).", field="training_plan_arn")
        plan_az, plan_count = plan["availability_zone"], plan["available_instances"]
    return CapacityFacts(instance_type, az, count, offered, q["limit"], q["in_use"], plan_az,
                         plan_count, quota_is_default=q["source"] == "default")


@service(Effect.READ, "inspect.availability_zones")
async def list_availability_zones(ctx: Ctx) -> list[Zone]:
    return await availability_zones(cloud_of(ctx.app))


@service(Effect.READ, "inspect.instance_types")
async def list_instance_types(ctx: Ctx, availability_zone: str | None = None,
                              accelerated_only: bool = False) -> list[InstanceType]:
    """Catalogue types with where EC2 offers them, GPU/EFA/memory facts and price."""
    types = [t for t in CATALOG.values() if t.accelerated or not accelerated_only]
    offered = await offered_azs(cloud_of(ctx.app), [t.name for t in types])
    out = []
    for t in types:
        azs = offered[t.name]
        if availability_zone and availability_zone not in azs:
            continue
        out.append(InstanceType(
            name=t.name, vcpu=t.vcpu, memory_gib=t.memory_gib, gpu_model=t.gpu_model,
            gpu_count=t.gpu_count, gpu_memory_gib=t.gpu_memory_gib,
            efa_interfaces=t.efa_interfaces, price_per_hour=t.price_per_hour,
            accelerated=t.accelerated, offered_in=azs))
    return out


@service(Effect.READ, "inspect.quota")
async def get_quota(ctx: Ctx, instance_type: str) -> Quota:
    if lookup(instance_type) is None and not instance_type.startswith("ml."):
        raise InvalidInput(f"{instance_type!r} is not a SageMaker instance type.",
                           field="instance_type")
    return await quota(cloud_of(ctx.app), instance_type)


@service(Effect.READ, "inspect.training_plans")
async def list_training_plans(ctx: Ctx) -> list[TrainingPlan]:
    return await training_plans(cloud_of(ctx.app))
