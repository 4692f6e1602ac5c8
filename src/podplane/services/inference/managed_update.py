"""The plan of a managed endpoint's update: the image, the model or the tensor parallelism
change in the operator's config (its `worker` and `modelSourceConfig`; the rest of the spec
stays as it is). The endpoint.update workflow then applies the new config, follows the
rollout of the operator's Deployment, sends one smoke request and, on failure, applies the
previous config again (services/inference/rollout.py, the same steps as self-managed)."""

from __future__ import annotations

import copy
from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.catalog import lookup
from podplane.domain.errors import InvalidInput
from podplane.domain.inference import managed, managed_views
from podplane.domain.inference.requests import EndpointUpdate
from podplane.services.cloud_access import cloud_of
from podplane.services.context import Ctx
from podplane.services.inference import managed as found
from podplane.services.inference import managed_room

Shape = dict[str, Any]
UPDATABLE = ("image", "model", "tensor_parallel")
STEPS = ["the operator rolls its Deployment one pod at a time; old pods serve until new "
         "ones are Ready", "send one completion through the Service (smoke test)",
         "on failure apply the previous config again and fail saying why"]


def current_of(config: Shape) -> Shape:
    worker = config["spec"].get("worker") or {}
    tp = managed_views.summary(config, None)["tensor_parallel"]
    return {"image": worker.get("image"), "model": managed_views.model_of(config),
            "tensor_parallel": tp or 1}


def _refuse_unsupported(update: EndpointUpdate, config: Shape) -> None:
    if update.autoscaling is not None:   # not a silent no-op
        raise InvalidInput("A managed endpoint's autoscaling is the operator's autoScalingSpec, "
                           "set when it is created.", field="autoscaling",
                           hint="Create a new endpoint with the bounds wanted.")
    for field in update.changes():
        if config.get("kind") == managed_views.JUMPSTART_KIND:
            raise InvalidInput("A JumpStart endpoint runs the hub's container for its model; "
                               "it cannot be updated in place.", field=field,
                               hint="Create a new endpoint, then delete this one.")
        if field not in UPDATABLE:
            raise InvalidInput(f"A managed endpoint's {field} cannot be changed; it takes "
                               f"{', '.join(UPDATABLE)}.", field=field)


async def plan(ctx: Ctx, kube: KubePort, cluster: str, config: Shape,
               update: EndpointUpdate) -> tuple[Shape, Shape]:
    """(plan, operation params) of the update; no `manifest` in the plan when nothing
    changes. Refuses (422 naming the field) what the operator's config cannot take."""
    _refuse_unsupported(update, config)
    name = config["metadata"]["name"]
    current = current_of(config)
    changes = {k: v for k, v in update.changes().items() if v != current.get(k)}
    out: Shape = {"endpoint": name,
                  "changes": {k: {"from": current.get(k), "to": v} for k, v in changes.items()}}
    if not changes:
        return out, {}
    wanted = {**current, **changes}
    spec = config["spec"]
    instance_type = lookup(str(spec.get("instanceType", "")))
    if instance_type is None:
        raise InvalidInput(f"Unknown instance type {spec.get('instanceType')!r}.",
                           field="instance_group")
    rendered = managed.render(name, wanted["model"], await found.bucket_of(ctx, cluster),
                              cloud_of(ctx.app).aws.region, instance_type,
                              tensor_parallel=wanted["tensor_parallel"], image=wanted["image"])
    new = managed.as_it_was(config)
    new["spec"] = copy.deepcopy(spec)
    for key in ("worker", "modelSourceConfig"):
        new["spec"][key] = rendered["spec"][key]
    replicas = int(spec.get("replicas", 1))
    if replicas:   # the rollout starts one new pod before it stops an old one
        out["gpus_free"] = await managed_room.refuse_no_room(
            kube, config, 1, gpus=int(wanted["tensor_parallel"]))
    out.update({"replicas": replicas, "steps": STEPS, "manifest": new})
    return out, {"managed": True, "replicas": replicas, "manifest": new,
                 "previous": managed.as_it_was(config)}
