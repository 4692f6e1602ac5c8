"""KubeRay RayJob (ray.io/v1): the manifest of a Ray workload, which pods belong to a RayJob, and
its status in podplane's words. Pure. Sources: the upstream CRD
(../shared/crds/kuberay/ray.io_rayjobs.yaml) and ray-project/kuberay
`ray-operator/controllers/ray/rayjob_controller.go` (docs/training.md, "KubeRay RayJob").

- The RayJob carries the whole Ray cluster (`rayClusterSpec`): a CPU head (the driver runs
  there: it reads the data, so it mounts the shared paths too) and one worker group of
  `replicas` pods with `gpus_per_replica` GPUs each, both health-gated onto the chosen group.
- K8sJobMode (KubeRay's default): a submitter Job named like the RayJob runs the entrypoint;
  its pod's log is the driver's log.
- `backoffLimit` = the request's `max_restarts`: KubeRay retries a failed run on a new cluster.
- `shutdownAfterJobFinishes` with `ttlSecondsAfterFinished`: the cluster's pods (and GPUs) go
  TTL seconds after the job ends; the submitter Job stays, so the driver's logs stay.
- Pods: the submitter's carry `ray.io/originated-from-cr-name=<job>`; the head and workers
  `ray.io/cluster=<status.rayClusterName>` (KubeRay names the cluster `<job>-xxxxx`).
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from podplane.domain.jobs.kinds import RAY
from podplane.domain.jobs.recipes import VERL_VERSION
from podplane.domain.jobs.workloads import Workload

Shape = dict[str, Any]
TTL_SECONDS = 300  # the cluster is kept 5 minutes after the job ends, for inspection
HEAD_RESOURCES = {"cpu": "8", "memory": "32Gi"}
WORKER_GROUP = "gpu-workers"
CLUSTER_LABEL, NODE_TYPE_LABEL = "ray.io/cluster", "ray.io/node-type"
VERL_PIP = {"vllm": "verl=={version}", "sglang": "verl[sglang]=={version}"}
# jobDeploymentStatus -> podplane's status word (rayjob_controller.go's states)
STATUS = {"": "Submitted", "New": "Submitted", "Initializing": "Pending", "Waiting": "Pending",
          "Retrying": "Pending", "Running": "Running", "Complete": "Succeeded",
          "Failed": "Failed", "ValidationFailed": "Failed", "Suspending": "Cancelled",
          "Suspended": "Cancelled"}


def manifest(work: Workload, meta: Shape, head: Shape, worker: Shape, replicas: int,
             entrypoint: list[str], max_restarts: int) -> Shape:
    """The RayJob from the workload and the pod templates render.py built (their command and
    args dropped: KubeRay runs `ray start` in the Ray container, and the workload's argv is the
    entrypoint). The restart budget is KubeRay's `backoffLimit`: a failed run is retried on a
    new Ray cluster that many times."""
    for template in (head, worker):
        container = template["spec"]["containers"][0]
        container.pop("command", None)
        container.pop("args", None)
        container["ports"] = [{"containerPort": 8080, "name": "metrics"}]
    head_c, worker_c = head["spec"]["containers"][0], worker["spec"]["containers"][0]
    head_c["name"], worker_c["name"] = "ray-head", "ray-worker"
    head_c["ports"] += [{"containerPort": 6379, "name": "gcs-server"},
                        {"containerPort": 8265, "name": "dashboard"},
                        {"containerPort": 10001, "name": "client"}]
    head_c["resources"] = {"requests": dict(HEAD_RESOURCES), "limits": dict(HEAD_RESOURCES)}
    runtime_env = _runtime_env(work)
    spec: Shape = {
        # KubeRay pastes the entrypoint into `bash -ce` after `ray job submit --`
        # (ray-operator/controllers/ray/common/job.go, BuildJobSubmitCommand); `ray job
        # submit` re-quotes the words it gets with shlex.join for the job's own shell
        # (python/ray/dashboard/modules/job/cli.py). Quoting each word once for bash gives
        # the trainer exactly these words (ADR 0017).
        "entrypoint": shlex.join(entrypoint),
        "submissionMode": "K8sJobMode",
        "shutdownAfterJobFinishes": True,
        "ttlSecondsAfterFinished": TTL_SECONDS,
        "backoffLimit": max_restarts,
        "rayClusterSpec": {
            # optional in the CRD; podplane does not know your own image's Ray version
            **({"rayVersion": work.recipe.ray_version} if work.recipe else {}),
            "headGroupSpec": {"rayStartParams": {"num-gpus": "0"}, "template": head},
            "workerGroupSpecs": [{"groupName": WORKER_GROUP, "replicas": replicas,
                                  "minReplicas": replicas, "maxReplicas": replicas,
                                  "rayStartParams": {}, "template": worker}]}}
    if runtime_env:
        spec["runtimeEnvYAML"] = json.dumps(runtime_env)  # YAML is a superset of JSON
    return {"apiVersion": RAY.api_version, "kind": RAY.kind, "metadata": meta, "spec": spec}


def _runtime_env(work: Workload) -> Shape:
    """VERL installed per job at the rollout engine's extra; your own image brings its own."""
    if work.recipe is None or work.recipe.framework != "verl":
        return {}
    pip = VERL_PIP.get(str(work.params.get("rollout", "vllm")), VERL_PIP["vllm"])
    return {"pip": [pip.format(version=VERL_VERSION)]}


def cluster_name(job: Shape) -> str | None:
    return ((job.get("status") or {}).get("rayClusterName")) or None


def pod_selectors(job: Shape) -> list[dict[str, str]]:
    """Label selectors whose pods together are the RayJob's: its submitter, then its cluster."""
    found = [RAY.selector(job["metadata"]["name"])]
    if cluster := cluster_name(job):
        found.append({CLUSTER_LABEL: cluster})
    return found


def owns(job: Shape, pod: Shape) -> bool:
    labels = pod["metadata"].get("labels") or {}
    return any(all(labels.get(k) == v for k, v in sel.items()) for sel in pod_selectors(job))


def role(pod: Shape) -> str:
    """head, worker or submitter (the driver's pod)."""
    return str((pod["metadata"].get("labels") or {}).get(NODE_TYPE_LABEL) or "submitter")


def status_of(job: Shape) -> str:
    return STATUS.get(str((job.get("status") or {}).get("jobDeploymentStatus") or ""),
                      "Pending")


def admitted(job: Shape) -> bool:
    """The operator has taken the RayJob: it set a deployment status."""
    return bool((job.get("status") or {}).get("jobDeploymentStatus"))


def suspended(job: Shape) -> bool:
    return bool((job.get("spec") or {}).get("suspend"))


def workers(job: Shape) -> int:
    groups = ((job.get("spec") or {}).get("rayClusterSpec") or {}).get("workerGroupSpecs") or []
    return sum(int(g.get("replicas") or 0) for g in groups)


def budget(job: Shape) -> Shape:
    """KubeRay retries a failed RayJob `spec.backoffLimit` times (a new cluster each time);
    `status.failed` counts the failures."""
    limit = int((job.get("spec") or {}).get("backoffLimit") or 0)
    spent = int((job.get("status") or {}).get("failed") or 0)
    spent = max(spent - 1, 0) if status_of(job) == "Failed" else spent
    return {"budget": limit, "spent": spent, "remaining": max(limit - spent, 0)}


def ray_view(job: Shape, pods: list[Shape]) -> Shape:
    """What KubeRay reports, and which pod is the driver."""
    status = job.get("status") or {}
    driver = next((p["metadata"]["name"] for p in pods if role(p) == "submitter"), None)
    info = status.get("rayJobInfo") or {}
    return {"job_deployment_status": status.get("jobDeploymentStatus") or None,
            "job_status": status.get("jobStatus") or None,
            "job_id": status.get("jobId") or None,
            "ray_cluster": cluster_name(job), "dashboard_url": status.get("dashboardURL"),
            "ray_version": ((job.get("spec") or {}).get("rayClusterSpec") or {}).get(
                "rayVersion"),
            "reason": status.get("reason") or None, "message": status.get("message") or None,
            "start_time": status.get("startTime"), "end_time": status.get("endTime"),
            "ray_job_start_time": info.get("startTime"), "ray_job_end_time": info.get("endTime"),
            "driver_pod": driver}
