"""What job work reads from a cluster, fresh every time: the job objects of every kind, their
pods, the nodes those pods run on, events, and the chosen instance group's GPUs."""

from __future__ import annotations

from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import CloudError, NotFound
from podplane.domain.jobs import render as rj
from podplane.domain.jobs.kinds import GROUP_LABEL, KINDS, NAMESPACE, RAY, Kind
from podplane.services.cloud_access import cloud_of
from podplane.services.context import Ctx
from podplane.services.scope import GroupGpus, labelled_gpus

Shape = dict[str, Any]
EFA = "vpc.amazonaws.com/efa"


FILES_SHOWN = 100  # per job view; the bucket keeps every file


async def files_of(ctx: Ctx, bucket: str | None, job: str) -> list[Shape] | None:
    """The objects under the job's checkpoint and output prefixes (what its pods saved through
    the bucket mount), newest first; None when the bucket cannot be read."""
    if bucket is None:
        return []
    found: list[Shape] = []
    try:
        for kind, prefix in rj.prefixes(bucket, job).items():
            key_prefix = (prefix or "").removeprefix(f"s3://{bucket}/")
            for obj in await cloud_of(ctx.app).aws.s3.list_objects(bucket, key_prefix):
                found.append({"kind": kind, "key": obj["Key"], "size": int(obj.get("Size", 0)),
                              "last_modified": obj.get("LastModified")})
    except CloudError:
        return None
    found.sort(key=lambda f: (str(f["last_modified"]), f["key"]), reverse=True)
    return found[:FILES_SHOWN]


async def jobs_of_kind(kube: KubePort, kind: Kind) -> list[Shape]:
    """The jobs of one kind; none when its operator (its CRD) is not installed."""
    try:
        return await kube.list(kind.api_version, kind.kind, namespace=NAMESPACE)
    except NotFound:
        return []


async def find_job(kube: KubePort, cluster: str, name: str) -> Shape:
    for kind in KINDS.values():
        try:
            found = await kube.get(kind.api_version, kind.kind, name, NAMESPACE)
        except NotFound:
            continue
        if found is not None:
            return found
    raise NotFound(f"Cluster {cluster!r} has no job {name!r}.",
                   hint="List jobs with job_list (GET .../jobs).")


async def pods_of(kube: KubePort, job: Shape) -> list[Shape]:
    kind = KINDS[str(job["kind"])]
    if kind is RAY:  # its submitter's pods and its RayCluster's (services/jobs/ray.py)
        from podplane.services.jobs import ray

        return await ray.pods(kube, job)
    return await kube.list("v1", "Pod", namespace=NAMESPACE,
                           labels=kind.selector(job["metadata"]["name"]))


async def nodes_by_name(kube: KubePort) -> dict[str, Shape]:
    return {n["metadata"]["name"]: n for n in await kube.list("v1", "Node")}


async def events_of(kube: KubePort, job: Shape, pods: list[Shape]) -> list[Shape]:
    """Events about the job and its pods, oldest first."""
    names = {job["metadata"]["name"], *(p["metadata"]["name"] for p in pods)}
    found = [e for e in await kube.list("v1", "Event", namespace=NAMESPACE)
             if (e.get("involvedObject") or {}).get("name") in names]
    return sorted(found, key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""))


async def group_gpus(kube: KubePort, group: str) -> GroupGpus:
    """GPUs of the group's Kubernetes nodes."""
    return await labelled_gpus(kube, {GROUP_LABEL: group})
