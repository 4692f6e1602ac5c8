"""Instance groups of a managed cluster: list, get, add, scale, delete.

Reads come straight from DescribeCluster. Mutations validate everything we can know before
any AWS call (names, counts, EFA-only, immutable fields), then start a durable operation
that sends one UpdateCluster and polls the source of truth until the group's target count
is reached.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from podplane.domain.effects import Effect
from podplane.domain.errors import ConfirmationRequired, Conflict, GroupExists
from podplane.domain.instance_groups import (
    UPDATE_ALLOWLIST,
    CapacityType,
    GroupShape,
    NewGroup,
    check_count,
    check_immutable,
    efa_capable_types,
    shape_of,
)
from podplane.services import scope
from podplane.services.cloud_access import cloud_of
from podplane.services.context import Ctx
from podplane.services.groups import cloud as gc
from podplane.services.groups.plan import plan_add
from podplane.services.groups.workflows import ADD, DELETE, SCALE
from podplane.services.mutation import Outcome, key_used, start, unchanged_or
from podplane.services.registry import escalate_to_destroy, service

Shape = dict[str, Any]


def target(cluster: str) -> str:
    # UpdateCluster is cluster-wide: group changes on one cluster go one at a time.
    return f"cluster/{cluster}/instance-groups"


@dataclass(frozen=True)
class GroupView:
    """A group as HyperPod reports it now (DescribeCluster), in our words. The REST response
    model is this very declaration."""

    name: str
    instance_type: str | None
    status: str | None
    target_count: int | None
    current_count: int | None
    capacity_type: CapacityType
    efa_only: bool
    training_plan_arn: str | None
    threads_per_core: int | None
    ebs_gb: int | None
    subnets: list[str]
    deep_health_checks: list[str]
    failure_message: str | None


def group_view(described: Shape, group: Shape) -> GroupView:
    shape = shape_of(group)
    ebs = [c["EbsVolumeConfig"].get("VolumeSizeInGB") for c in
           group.get("InstanceStorageConfigs") or [] if "EbsVolumeConfig" in c]
    return GroupView(
        name=group["InstanceGroupName"], instance_type=group.get("InstanceType"),
        status=group.get("Status"), target_count=group.get("TargetCount"),
        current_count=group.get("CurrentCount"),
        capacity_type=shape.capacity_type, efa_only=shape.efa_only,
        training_plan_arn=group.get("TrainingPlanArn"),
        threads_per_core=group.get("ThreadsPerCore"), ebs_gb=ebs[0] if ebs else None,
        subnets=list(gc.vpc_config(described, group).get("Subnets", [])),
        deep_health_checks=list(group.get("OnStartDeepHealthChecks") or []),
        failure_message=described.get("FailureMessage")
        if group.get("Status") in ("Degraded", "Failed") else None,
    )


@service(Effect.READ, "instance_group.list")
async def list_groups(ctx: Ctx, cluster: str) -> list[GroupView]:
    ref = await scope.cluster_ref(ctx, cluster)
    described = await scope.describe(cloud_of(ctx.app).aws.hyperpod, ref)
    return [group_view(described, g) for g in scope.groups_of(described)]


@service(Effect.READ, "instance_group.get")
async def get_group(ctx: Ctx, cluster: str, group: str) -> GroupView:
    ref = await scope.cluster_ref(ctx, cluster)
    described = await scope.describe(cloud_of(ctx.app).aws.hyperpod, ref)
    return group_view(described, scope.require_group(described, ref, group))


@service(Effect.CREATE, "instance_group.add",
         target=lambda cluster, group, *_a, **_k: f"cluster/{cluster}/instance-group/{group.name}")
async def add_group(ctx: Ctx, cluster: str, group: NewGroup, *, dry_run: bool = False,
                    idempotency_key: str | None = None) -> Outcome:
    group.validate(efa_capable_types())
    ref = await scope.cluster_ref(ctx, cluster)
    params = {"cluster_ref": ref.params(),
              "group": {**asdict(group), "capacity_type": group.capacity_type.value}}
    if await key_used(ctx, idempotency_key):
        return await start(ctx, ADD, target(cluster), params, idempotency_key, {})
    try:
        plan = (await plan_add(cloud_of(ctx.app), ref, group)).describe(group)
    except GroupExists as taken:
        return await unchanged_or(taken, ctx, ADD, target(cluster), params["group"],
                                  {"instance_group": group.name}, dry_run, field="group",
                                  about=lambda made: made["group"]["name"] == group.name)
    if dry_run:
        return Outcome(True, plan, dry_run=True)
    return await start(ctx, ADD, target(cluster), params, idempotency_key, plan)


@service(Effect.MUTATE, "instance_group.scale",
         target=lambda cluster, group, *_a, **_k: f"cluster/{cluster}/instance-group/{group}")
async def scale_group(ctx: Ctx, cluster: str, group: str, count: int | None = None, *,
                      capacity_type: CapacityType | None = None, efa_only: bool | None = None,
                      confirm: bool = False, dry_run: bool = False,
                      idempotency_key: str | None = None) -> Outcome:
    """PATCH: only `count` may change; capacity type and EFA-only are refused (immutable)
    before any AWS call. Fewer nodes terminate instances: a destroy (admin + confirm)."""
    if count is not None:
        check_count(count, allow_zero=True)
    ref = await scope.cluster_ref(ctx, cluster)
    params = {"cluster_ref": ref.params(), "group": group, "count": count}
    if count is not None and await key_used(ctx, idempotency_key):
        return await start(ctx, SCALE, target(cluster), params, idempotency_key, {})
    described = await scope.describe(cloud_of(ctx.app).aws.hyperpod, ref)
    current = scope.require_group(described, ref, group)
    shape = shape_of(current)
    check_immutable(shape, GroupShape(capacity_type or shape.capacity_type,
                                      shape.efa_only if efa_only is None else efa_only))
    before = current.get("TargetCount")
    if count is not None and before is not None and count < int(before):
        escalate_to_destroy(ctx, "instance_group.scale", f"Scaling {group!r} from {before} to "
                            f"{count} terminates {int(before) - count} node(s)",
                            confirm=confirm, dry_run=dry_run)
    if count is not None and not current.get("TrainingPlanArn"):
        await gc.check_quota(cloud_of(ctx.app).aws.quotas, described,
                             str(current.get("InstanceType")), count - int(before or 0))
    plan = {"group": group, "count_from": before, "count_to": before if count is None else count,
            "fields_sent": list(UPDATE_ALLOWLIST),
            "other_groups_resubmitted_unchanged": [
                g["InstanceGroupName"] for g in scope.groups_of(described)
                if g["InstanceGroupName"] != group]}
    if count is None or count == before:
        return Outcome(False, plan, dry_run=dry_run)
    if dry_run:
        return Outcome(True, plan, dry_run=True)
    return await start(ctx, SCALE, target(cluster), params, idempotency_key, plan)


@service(Effect.DESTROY, "instance_group.delete",
         target=lambda cluster, group, *_a, **_k: f"cluster/{cluster}/instance-group/{group}")
async def delete_group(ctx: Ctx, cluster: str, group: str, *, confirm: bool = False,
                       dry_run: bool = False, idempotency_key: str | None = None) -> Outcome:
    ref = await scope.cluster_ref(ctx, cluster)
    params = {"cluster_ref": ref.params(), "group": group}
    if confirm and await key_used(ctx, idempotency_key):
        return await start(ctx, DELETE, target(cluster), params, idempotency_key, {})
    described = await scope.describe(cloud_of(ctx.app).aws.hyperpod, ref)
    current = scope.require_group(described, ref, group)
    if len(scope.groups_of(described)) == 1:
        raise Conflict(f"{group!r} is the cluster's last instance group.",
                       hint="Scale it to zero instead, or delete the whole cluster.")
    plan = {"group": group, "nodes_terminated": current.get("CurrentCount", 0),
            "warning": "Every node of the group is terminated; data on instance storage is "
                       "lost. Jobs running there fail unless they checkpoint elsewhere."}
    if dry_run:
        return Outcome(True, plan, dry_run=True)
    if not confirm:
        raise ConfirmationRequired(
            f"Deleting instance group {group!r} terminates its "
            f"{current.get('CurrentCount', 0)} node(s).",
            hint="Send confirm=true once the user agreed (dry_run=true shows the plan).")
    return await start(ctx, DELETE, target(cluster), params, idempotency_key, plan)
