"""An endpoint request -> its Deployment and Service (self-managed serving).

Both objects carry the endpoint's name (unique per endpoint, refused when taken) and podplane's
ownership labels, so list/get/delete find exactly what podplane made and never touch an object
it did not write. Pods request `nvidia.com/gpu` = tensor x pipeline parallelism (the NVIDIA
device plugin's extended resource) and require a healthy node of the chosen instance group, as
jobs do (`domain.jobs.render`). Exposure: a ClusterIP Service (in-cluster; podplane reaches it
through the API server's service proxy) or a LoadBalancer Service (Kubernetes docs, "Service",
type LoadBalancer).
"""

from __future__ import annotations

from typing import Any

from podplane.domain.catalog import InstanceType
from podplane.domain.errors import InvalidInput
from podplane.domain.inference import router, shutdown
from podplane.domain.inference.engines import ENGINES, arguments
from podplane.domain.jobs.kinds import GROUP_LABEL, HEALTH_LABEL, MANAGED_BY
from podplane.domain.jobs.render import GPU

Manifest = dict[str, Any]
NAMESPACE = "default"
ENDPOINT_LABEL = "podplane.io/endpoint"
ENGINE_LABEL = "podplane.io/engine"
COMPONENT = "app.kubernetes.io/component"
COMPONENT_VALUE = "inference-endpoint"
MODEL_ANNOTATION = "podplane.io/model"
GROUP_ANNOTATION = "podplane.io/instance-group"
CONTAINER = "engine"
PORT_NAME = "http"


def owned(name: str) -> dict[str, str]:
    """The labels every object of one endpoint carries (its selector too)."""
    return {ENDPOINT_LABEL: name}


def gpus_per_pod(request: dict[str, Any]) -> int:
    """Tensor x pipeline parallelism: every stage's shard on one node, one GPU each."""
    return int(request.get("tensor_parallel", 1)) * int(request.get("pipeline_parallel") or 1)


def check_fits(request: dict[str, Any], instance_type: InstanceType | None) -> None:
    """A replica's GPUs (tensor x pipeline) must be on one node of the group's instance type."""
    tp, gpus = int(request.get("tensor_parallel", 1)), gpus_per_pod(request)
    if instance_type is None:
        return  # an unknown type: the scheduler's answer (Pending) will say it
    if instance_type.gpu_count == 0:
        raise InvalidInput(f"Instance group {request['instance_group']!r} has no GPUs "
                           f"({instance_type.name}).", field="instance_group",
                           hint="Choose a GPU instance group.")
    if gpus > instance_type.gpu_count:
        what = f"tensor_parallel={tp}" if gpus == tp else \
            f"tensor_parallel x pipeline_parallel = {gpus}"
        raise InvalidInput(f"{what}, but {instance_type.name} has "
                           f"{instance_type.gpu_count} GPU(s) per node.",
                           field="tensor_parallel" if gpus == tp else "pipeline_parallel",
                           hint=f"Use at most {instance_type.gpu_count}, or a larger "
                           "instance type.")


def render(request: dict[str, Any]) -> list[Manifest]:
    """The Deployment and the Service, from the request as the operation stored it. Pure, so
    a resumed operation applies exactly what the plan showed. With an SGLang router
    (`domain/inference/router.py`) its objects follow, and the Service selects the router."""
    router.check(request)
    found = [deployment(request), service(request)]
    if request.get("router"):
        found += router.objects(request, _labels(request), NAMESPACE, owned(request["name"]))
    return found


def _labels(request: dict[str, Any]) -> dict[str, str]:
    return {MANAGED_BY: "podplane", COMPONENT: COMPONENT_VALUE, ENGINE_LABEL: request["engine"],
            **owned(request["name"])}


def deployment(request: dict[str, Any]) -> Manifest:
    engine = ENGINES[request["engine"]]
    name, gpus = request["name"], gpus_per_pod(request)
    probe = {"httpGet": {"path": engine.health_path, "port": PORT_NAME},
             "periodSeconds": 10, "failureThreshold": 3}
    container = {
        "name": CONTAINER, "image": request.get("image") or engine.image,
        "command": list(engine.command), "args": arguments(engine, request),
        "ports": [{"name": PORT_NAME, "containerPort": engine.port, "protocol": "TCP"}],
        "resources": {"requests": {GPU: str(gpus)}, "limits": {GPU: str(gpus)}},  # quantities
        # Ready (in the Service's endpoints) only once the weights are loaded and it answers.
        "readinessProbe": probe,
        # A scale-in or rollout loses no request: sleep before SIGTERM (shutdown.py).
        "lifecycle": shutdown.prestop_hook(),
        "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}]}
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": HEALTH_LABEL, "operator": "In", "values": ["Schedulable"]},
            {"key": GROUP_LABEL, "operator": "In", "values": [request["instance_group"]]}]}]}}}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": _labels(request),
                         "annotations": {MODEL_ANNOTATION: request["model"],
                                         GROUP_ANNOTATION: request["instance_group"],
                                         **({router.POLICY_ANNOTATION: request["router"]}
                                            if request.get("router") else {})}},
            "spec": {"replicas": int(request.get("replicas", 1)),
                     "selector": {"matchLabels": owned(name)},
                     # Serving capacity never drops during an update: one new pod at a time,
                     # an old one stops only once a new one is Ready (Kubernetes docs,
                     # "Deployments", Rolling Update Deployment: maxSurge, maxUnavailable).
                     "strategy": {"type": "RollingUpdate",
                                  "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                     "template": {
                         "metadata": {"labels": _labels(request)},
                         "spec": {"containers": [container], "affinity": affinity,
                                  "terminationGracePeriodSeconds": shutdown.GRACE_SECONDS,
                                  "volumes": [{"name": "shm",
                                               "emptyDir": {"medium": "Memory"}}]}}}}


# A load balancer is internal to the VPC unless the request is `public` (issue 34, S6): the
# AWS Load Balancer Controller reads the scheme annotation (its docs, "Service annotations":
# aws-load-balancer-scheme, default internal for its NLBs), the in-tree cloud provider the
# `-internal` one (Kubernetes docs, "Service", Internal load balancer, AWS). Public subnets
# carry kubernetes.io/role/elb, so without them EKS may make it internet-facing.
SCHEME = "service.beta.kubernetes.io/aws-load-balancer-scheme"
INTERNAL = "service.beta.kubernetes.io/aws-load-balancer-internal"


def check_exposure(request: dict[str, Any]) -> bool:
    """Whether the request opens a load balancer to the internet (the caller then needs an
    admin who confirmed); refuses what does not fit together, naming the field."""
    balanced = request.get("exposure") == "load_balancer"
    if request.get("source_ranges") and not balanced:
        raise InvalidInput("source_ranges needs exposure=load_balancer.", field="source_ranges")
    if not request.get("public"):
        return False
    if not balanced or request.get("kind") == "managed":
        raise InvalidInput("public needs a self-managed endpoint with "
                           "exposure=load_balancer.", field="public")
    if not request.get("source_ranges"):
        raise InvalidInput("A public load balancer needs source_ranges: the CIDRs that may "
                           "reach it.", field="source_ranges",
                           hint="e.g. [\"203.0.113.0/24\"]; 0.0.0.0/0 is the whole internet.")
    return True


def service(request: dict[str, Any]) -> Manifest:
    engine = ENGINES[request["engine"]]
    balanced = request.get("exposure") == "load_balancer"
    spec: Manifest = {"type": "LoadBalancer" if balanced else "ClusterIP",
                      "selector": router.selector(request["name"])
                      if request.get("router") else owned(request["name"]),
                      "ports": [{"name": PORT_NAME, "port": engine.port,
                                 "targetPort": PORT_NAME, "protocol": "TCP"},
                                *router.service_ports(request)]}
    metadata: Manifest = {"name": request["name"], "namespace": NAMESPACE,
                          "labels": _labels(request)}
    if balanced:
        public = bool(request.get("public"))
        metadata["annotations"] = {SCHEME: "internet-facing" if public else "internal",
                                   **({} if public else {INTERNAL: "true"})}
        if request.get("source_ranges"):
            spec["loadBalancerSourceRanges"] = list(request["source_ranges"])
    return {"apiVersion": "v1", "kind": "Service", "metadata": metadata, "spec": spec}


def as_it_was(dep: Manifest) -> Manifest:
    """The live Deployment as a manifest to apply again (an update's rollback): its pod
    template, selector and strategy as they are, podplane's labels and annotations. Applying
    it brings back the previous ReplicaSet, as `kubectl rollout undo` does."""
    meta, spec = dep["metadata"], dep.get("spec") or {}
    notes = {k: v for k, v in (meta.get("annotations") or {}).items()
             if k.startswith("podplane.io/")}
    kept = {k: spec[k] for k in ("selector", "strategy", "template") if k in spec}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": meta["name"], "namespace": NAMESPACE,
                         "labels": meta.get("labels") or {}, "annotations": notes},
            "spec": kept}


def labels_of(request: dict[str, Any]) -> dict[str, str]:
    """podplane's labels on an endpoint's objects (the autoscaler's ScaledObject too)."""
    return _labels(request)
