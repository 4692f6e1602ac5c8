"""The job view: status, restart budget and what has been spent, the last fault (which node,
why), each pod with its node and that node's HyperPod health verdict. Pure: the service reads
the job, its pods, their nodes and events, and hands them here.

Status fields read, per kind:
- HyperPodPyTorchJob (FIELDS.md, status): conditions Created / Running / Completed / Failed
  (the order the HyperPod CLI reads them), `restartCount`, `latestFaultyPodInstanceList`
  {restartType, faultyInstanceIdList, faultyPodList}; the budget is
  `spec.runPolicy.jobMaxRetryCount`.
- PyTorchJob (kubeflow.org_pytorchjobs.yaml): conditions Created / Running / Restarting /
  Succeeded / Failed / Suspended; the budget is `spec.runPolicy.backoffLimit`, spent = its
  pods' container restarts (how the operator counts against backoffLimit).
"""

from __future__ import annotations

from typing import Any

from podplane.domain.jobs import ray
from podplane.domain.jobs.kinds import (
    HEALTH_LABEL,
    HYPERPOD,
    KINDS,
    MANAGED_BY,
    RAY,
    RECIPE_LABEL,
)

Shape = dict[str, Any]
FAULT_LABELS = ("sagemaker.amazonaws.com/fault-reason", "sagemaker.amazonaws.com/fault-reasons",
                "sagemaker.amazonaws.com/fault-type", "sagemaker.amazonaws.com/fault-types")
DONE = {"Succeeded", "Failed", "Cancelled"}


def conditions(job: Shape) -> list[Shape]:
    return list((job.get("status") or {}).get("conditions") or [])


def true_conditions(job: Shape) -> set[str]:
    return {c["type"] for c in conditions(job) if c.get("status") == "True"}


def status_of(job: Shape) -> str:
    """One word: Submitted, Pending, Running, Succeeded, Failed or Cancelled."""
    if job.get("kind") == RAY.kind:  # no conditions: KubeRay's jobDeploymentStatus (ray.py)
        return ray.status_of(job)
    true = true_conditions(job)
    if "Failed" in true:
        return "Failed"
    if true & {"Completed", "Succeeded"}:
        return "Succeeded"
    if "Suspended" in true or _suspended(job):
        return "Cancelled"
    if "Running" in true:
        return "Running"
    return "Pending" if true else "Submitted"


def _suspended(job: Shape) -> bool:
    return bool(((job.get("spec") or {}).get("runPolicy") or {}).get("suspend"))


def budget(job: Shape, pods: list[Shape]) -> Shape:
    run = (job.get("spec") or {}).get("runPolicy") or {}
    status = job.get("status") or {}
    if job.get("kind") == RAY.kind:
        return ray.budget(job)
    if job.get("kind") == HYPERPOD.kind:
        limit = run.get("jobMaxRetryCount")
        spent = int(status.get("restartCount") or 0)
    else:
        limit = run.get("backoffLimit")
        spent = sum(int(cs.get("restartCount") or 0) for p in pods
                    for cs in (p.get("status") or {}).get("containerStatuses") or [])
    limit = int(limit) if limit is not None else 0
    return {"budget": limit, "spent": spent, "remaining": max(limit - spent, 0)}


def node_verdict(node: Shape | None) -> Shape:
    """The HyperPod health label of a pod's node (AWS docs, "node labels"): only Schedulable
    takes workloads; the fault labels say why not."""
    if node is None:
        return {"health": None, "schedulable": False, "fault": None, "present": False}
    labels = node["metadata"].get("labels") or {}
    health = labels.get(HEALTH_LABEL)
    fault = next((labels[k] for k in FAULT_LABELS if labels.get(k)), None)
    return {"health": health, "schedulable": health == "Schedulable"
            and not (node.get("spec") or {}).get("unschedulable"), "fault": fault,
            "present": True}


def pod_view(pod: Shape, nodes: dict[str, Shape]) -> Shape:
    status = pod.get("status") or {}
    node = (pod.get("spec") or {}).get("nodeName")
    statuses = status.get("containerStatuses") or []
    return {"name": pod["metadata"]["name"], "phase": status.get("phase", "Pending"),
            "node": node, "node_verdict": node_verdict(nodes.get(node)) if node else None,
            "containers": [c["name"] for c in (pod.get("spec") or {}).get("containers") or []],
            "restarts": sum(int(cs.get("restartCount") or 0) for cs in statuses),
            "ready": all(cs.get("ready") for cs in statuses) if statuses else False}


def last_fault(job: Shape, events: list[Shape]) -> Shape | None:
    """Which node(s) the latest restart (or the failure) came from, and why: the operator's
    faulty-instance list with the message of its latest restart or failure event."""
    faulty = (job.get("status") or {}).get("latestFaultyPodInstanceList") or {}
    warnings = [e for e in events if e.get("type") == "Warning"
                and (e.get("involvedObject") or {}).get("kind") == job.get("kind")]
    if not faulty and not warnings:
        return None
    latest = warnings[-1] if warnings else {}
    return {"instance_ids": list(faulty.get("faultyInstanceIdList") or []),
            "pods": list(faulty.get("faultyPodList") or []),
            "restart_type": faulty.get("restartType"),
            "reason": latest.get("reason"), "message": latest.get("message")}


def summary(job: Shape) -> Shape:
    meta = job["metadata"]
    status = job.get("status") or {}
    labels = meta.get("labels") or {}
    return {"name": meta["name"], "kind": job.get("kind"),
            "recipe": labels.get(RECIPE_LABEL), "image": image_of(job),
            "managed_by": labels.get(MANAGED_BY),
            "status": status_of(job), "created_at": meta.get("creationTimestamp"),
            "started_at": status.get("startTime"),
            "completed_at": status.get("completionTime") or status.get("endTime"),
            "replicas": replicas(job)}


def image_of(job: Shape) -> str | None:
    """The image of the job's first pod template: the recipe's or your own (the trainer for
    PyTorch kinds, the Ray head's for a RayJob)."""
    spec = job.get("spec") or {}
    if job.get("kind") == RAY.kind:
        templates = [((spec.get("rayClusterSpec") or {}).get("headGroupSpec") or {})]
    elif job.get("kind") == HYPERPOD.kind:
        templates = list(spec.get("replicaSpecs") or [])
    else:
        templates = list((spec.get("pytorchReplicaSpecs") or {}).values())
    for replica in templates:
        for container in ((replica.get("template") or {}).get("spec") or {}).get(
                "containers") or []:
            return str(container.get("image") or "") or None
    return None


def list_item(job: Shape, namespace_pods: list[Shape]) -> Shape:
    """A row of the jobs list: the summary with its pods ready and restarts of its budget,
    from one read of the namespace's pods (not one read per job)."""
    kind = KINDS[str(job["kind"])]
    name = job["metadata"]["name"]
    mine = [p for p in namespace_pods
            if (p["metadata"].get("labels") or {}).get(kind.pod_label) == name
            or (kind is RAY and ray.owns(job, p))]
    ready = sum(pod_view(p, {})["ready"] for p in mine)
    return {**summary(job), "pods": len(mine), "pods_ready": ready,
            "restarts": budget(job, mine)}


def replicas(job: Shape) -> int:
    spec = job.get("spec") or {}
    if job.get("kind") == RAY.kind:
        return ray.workers(job)
    if job.get("kind") == HYPERPOD.kind:
        return sum(int(r.get("replicas") or 0) for r in spec.get("replicaSpecs") or [])
    return sum(int(r.get("replicas") or 0)
               for r in (spec.get("pytorchReplicaSpecs") or {}).values())


def job_view(job: Shape, pods: list[Shape], nodes: dict[str, Shape], events: list[Shape],
             outputs: dict[str, str | None]) -> Shape:
    kind = KINDS[str(job["kind"])]
    pods = sorted(pods, key=lambda p: p["metadata"]["name"])
    is_ray = kind is RAY
    return {**summary(job), "restarts": budget(job, pods), "last_fault": last_fault(job, events),
            "pods": [{**pod_view(p, nodes), "role": ray.role(p) if is_ray else None}
                     for p in pods],
            "pod_selector": kind.selector(job["metadata"]["name"]),
            "ray": ray.ray_view(job, pods) if is_ray else None,
            "conditions": [{"type": c.get("type"), "status": c.get("status"),
                            "reason": c.get("reason"), "message": c.get("message"),
                            "last_transition_time": c.get("lastTransitionTime")}
                           for c in conditions(job)],
            "outputs": outputs}
