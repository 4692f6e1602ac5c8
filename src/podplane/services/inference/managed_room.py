"""GPU room for a managed endpoint's scale and update, as the self-managed path checks it
(services/inference/cluster.refuse_no_room): 409, nothing changed, when the new replicas would
not fit the free GPUs.

Where the operator places pods: on the nodes of the config's instance type (its Deployment's
nodeSelector `node.kubernetes.io/instance-type`; ../shared/crds/hyperpod-inference
`instanceType` of an InferenceEndpointConfig, `server.instanceType` of a JumpStartModel), in
whichever instance group they are. GPUs per pod: what the operator's Deployment requests (a
JumpStart model's container is chosen by the operator from the hub), else the config's worker.
"""

from __future__ import annotations

from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import Conflict
from podplane.domain.inference.managed_views import JUMPSTART_KIND
from podplane.domain.manifests.accelerators import INSTANCE_TYPE_LABEL
from podplane.services.inference import cluster as ic
from podplane.services.inference import managed
from podplane.services.scope import requested_gpus

Shape = dict[str, Any]


def instance_type_of(config: Shape) -> str:
    spec = config.get("spec") or {}
    if config.get("kind") == JUMPSTART_KIND:
        return str((spec.get("server") or {}).get("instanceType") or "")
    return str(spec.get("instanceType") or "")


def replicas_of(config: Shape) -> int:
    """The config's replicas; 409 when the operator autoscales it (KEDA, not `replicas`, sets
    its Deployment's count then: a manual scale would never settle)."""
    spec = config.get("spec") or {}
    if spec.get("autoScalingSpec"):
        raise Conflict(f"Managed endpoint {config['metadata']['name']!r} is autoscaled by the "
                       "inference operator: KEDA sets its replicas.",
                       hint="Delete and recreate it without autoscaling to scale by hand.")
    return int(spec.get("replicas", 1))


async def gpus_per_pod(kube: KubePort, config: Shape) -> int:
    dep = await managed.deployment_of(kube, config)
    template = ((dep or {}).get("spec") or {}).get("template")
    if template:
        return requested_gpus(template)
    worker = (config.get("spec") or {}).get("worker") or {}
    return requested_gpus({"spec": {"containers": [worker]}}) or 1


async def refuse_no_room(kube: KubePort, config: Shape, more: int,
                         gpus: int | None = None) -> int:
    """`more` pods of `gpus` GPUs (default: what its pods request now) must fit the free GPUs
    of the config's instance type; the free GPUs."""
    itype = instance_type_of(config)
    per_pod = gpus if gpus is not None else await gpus_per_pod(kube, config)
    return await ic.refuse_no_room_on(kube, {INSTANCE_TYPE_LABEL: itype},
                                      f"instance type {itype}", per_pod, more)
