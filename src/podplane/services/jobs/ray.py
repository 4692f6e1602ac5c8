"""What RayJobs need beyond the other kinds: the kuberay feature's CRD before a submission, and
their pods, which two KubeRay objects own (the submitter Job, and the RayCluster named in the
RayJob's status): domain/jobs/ray.py."""

from __future__ import annotations

from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import Conflict, NotFound
from podplane.domain.jobs import ray
from podplane.domain.jobs.kinds import NAMESPACE, RAY, Kind

Shape = dict[str, Any]
CRD = "rayjobs.ray.io"
FEATURE = "kuberay"
# KubeRay's own suspension switch (RayJob spec.suspend): the RayCluster and the submitter Job
# are deleted, the RayJob is kept (rayjob_controller.go, Suspending -> Suspended).
SUSPEND = {"spec": {"suspend": True}}


class FeatureRequired(Conflict):
    code = "feature_required"


async def require_kuberay(kube: KubePort, cluster: str, workload: str) -> None:
    """409 unless the kuberay feature's RayJob CRD is installed on the cluster."""
    try:
        found = await kube.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", CRD)
    except NotFound:
        found = None
    if found is None:
        raise FeatureRequired(
            f"{workload} runs as a KubeRay RayJob, but the {FEATURE!r} feature is not "
            f"enabled on cluster {cluster!r} (no {CRD} CRD).",
            hint=f"Enable it first: PATCH /api/v1/clusters/{cluster}/features/{FEATURE} "
            '{"enabled": true} (MCP feature_set), then submit again.')


async def pods(kube: KubePort, job: Shape) -> list[Shape]:
    """The RayJob's submitter, head and worker pods."""
    found: dict[str, Shape] = {}
    for selector in ray.pod_selectors(job):
        for pod in await kube.list("v1", "Pod", namespace=NAMESPACE, labels=selector):
            found[pod["metadata"]["name"]] = pod
    return list(found.values())


async def pods_by_name(kube: KubePort, kind: Kind, name: str) -> list[Shape]:
    """A job's pods from its name (the workflows' view): for a RayJob, also the pods of every
    RayCluster it made, so a deleted RayJob is gone only once its clusters' pods are."""
    if kind is not RAY:
        return await kube.list("v1", "Pod", namespace=NAMESPACE, labels=kind.selector(name))
    job = await kube.get(RAY.api_version, RAY.kind, name, NAMESPACE)
    found = {p["metadata"]["name"]: p for p in await pods(kube, job)} if job else {
        p["metadata"]["name"]: p for p in await kube.list(
            "v1", "Pod", namespace=NAMESPACE, labels=RAY.selector(name))}
    try:
        clusters = await kube.list("ray.io/v1", "RayCluster", namespace=NAMESPACE,
                                   labels=RAY.selector(name))
    except NotFound:
        clusters = []
    for cluster in clusters:
        for pod in await kube.list("v1", "Pod", namespace=NAMESPACE,
                                   labels={ray.CLUSTER_LABEL: cluster["metadata"]["name"]}):
            found[pod["metadata"]["name"]] = pod
    return list(found.values())
