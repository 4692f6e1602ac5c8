"""KubeRay's RayJob rules that need no store: validation (utils/validation.go
`ValidateRayJobMetadata`, `ValidateRayJobSpec`), the retry decision (rayjob_controller.go
`checkBackoffLimitAndUpdateStatusIfNeeded`), the submitter's pod template (`getSubmitterTemplate`,
`configureSubmitterContainer`; common/job.go `GetDefaultSubmitterContainer`,
`BuildJobSubmitCommand`) and Ray's job messages. controllers/kuberay.py uses them."""

from __future__ import annotations

from typing import Any

from podplane_sandbox.kube.controllers.kubelet import DURATION, EXIT_CODE
from podplane_sandbox.kube.controllers.kuberay_cluster import LOG_KIND
from podplane_sandbox.kube.util import clone

Obj = dict[str, Any]
PENDING_SECONDS = 2.0  # how long a submitted Ray job stays PENDING (the sandbox's choice)
DEFAULT_SECONDS = 60.0
SUBMITTER = "ray-job-submitter"
ENTRYPOINT_EXIT = "sandbox.podplane.io/entrypoint-exit-code"
LABELS = ("ray.io/originated-from-cr-name", "ray.io/originated-from-crd")


JOB_MESSAGES = {  # Ray's job manager (ray-project/ray, python/ray/dashboard/modules/job/)
    "PENDING": "Job has not started yet. It may be waiting for resources (CPUs, GPUs, memory, "
               "custom resources) to become available.",
    "RUNNING": "Job is currently running.",
    "SUCCEEDED": "Job finished successfully.",
}


def backoff(job: Obj, status: Obj) -> None:
    """checkBackoffLimitAndUpdateStatusIfNeeded: count the attempt, retry while allowed."""
    failed, succeeded = int(status.get("failed") or 0), int(status.get("succeeded") or 0)
    state = status.get("jobDeploymentStatus")
    failed += state == "Failed"
    succeeded += state == "Complete" and status.get("jobStatus") == "SUCCEEDED"
    status.update(failed=failed, succeeded=succeeded)
    limit = job["spec"].get("backoffLimit")
    if state == "Failed" and limit is not None and failed < int(limit) + 1 and \
            status.get("reason") not in ("DeadlineExceeded", "JobStatusCheckTimeoutExceeded"):
        status["jobDeploymentStatus"] = "Retrying"


def validate(job: Obj) -> str | None:
    """What ValidateRayJobMetadata / ValidateRayJobSpec refuse (the rules podplane can meet)."""
    spec, name = job.get("spec") or {}, job["metadata"]["name"]
    if len(name) > 47:
        return "The RayJob metadata is invalid: RayJob name should be no more than 47 characters"
    if spec.get("suspend") and not spec.get("shutdownAfterJobFinishes"):
        return ("The RayJob spec is invalid: a RayJob with shutdownAfterJobFinishes set to "
                "false is not allowed to be suspended")
    if int(spec.get("ttlSecondsAfterFinished") or 0) < 0:
        return "The RayJob spec is invalid: TTLSecondsAfterFinished must be a non-negative integer"
    if not spec.get("rayClusterSpec") and not spec.get("clusterSelector"):
        return ("The RayJob spec is invalid: one of RayClusterSpec or ClusterSelector must "
                "be set")
    if int(spec.get("backoffLimit") or 0) < 0:
        return "The RayJob spec is invalid: backoffLimit must be a positive integer"
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and int(deadline) <= 0:
        return "The RayJob spec is invalid: activeDeadlineSeconds must be a positive integer"
    return None


def submitter_template(job: Obj, cluster: Obj, status: Obj) -> Obj:
    """getSubmitterTemplate + configureSubmitterContainer (K8sJobMode)."""
    spec = job["spec"]
    head = cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    template = clone(spec.get("submitterPodTemplate") or {"spec": {
        "restartPolicy": "Never",
        "containers": [{"name": SUBMITTER, "image": head.get("image", ""), "resources": {
            "limits": {"cpu": "1", "memory": "1Gi"},
            "requests": {"cpu": "500m", "memory": "200Mi"}}}]}})
    container = template["spec"]["containers"][0]
    address = f"http://{status['dashboardURL']}"
    job_id = status["jobId"]
    if not container.get("command"):
        container["command"] = ["/bin/bash", "-ce", "--"]
        container["args"] = [
            f"until python3 -c 'import urllib.request; urllib.request.urlopen(\"{address}"
            f"/api/gcs_healthz\", timeout=5)' >/dev/null 2>&1 ; do echo \"Waiting for Ray "
            f"Dashboard GCS to become healthy at {address} ...\" ; sleep 2 ; done ; "
            f"if ! ray job status --address {address} {job_id} >/dev/null 2>&1 ; then "
            f"ray job submit --address {address} --no-wait --submission-id {job_id} -- "
            f"{spec.get('entrypoint', '').strip()} ; fi ; "
            f"ray job logs --address {address} --follow {job_id}"]
    container.setdefault("env", []).extend([
        {"name": "PYTHONUNBUFFERED", "value": "1"},
        {"name": "RAY_DASHBOARD_ADDRESS", "value": status["dashboardURL"]},
        {"name": "RAY_JOB_SUBMISSION_ID", "value": job_id}])
    meta = template.setdefault("metadata", {})
    meta.setdefault("labels", {}).update({LABELS[0]: job["metadata"]["name"],
                                          LABELS[1]: "RayJob",
                                          "app.kubernetes.io/created-by": "kuberay-operator"})
    given = job["metadata"].get("annotations") or {}
    seconds = float(given.get(DURATION, DEFAULT_SECONDS)) + PENDING_SECONDS
    meta.setdefault("annotations", {}).update({
        LOG_KIND: "ray-driver", DURATION: str(seconds),
        ENTRYPOINT_EXIT: given.get(EXIT_CODE, "0")})
    return template


def failure_tail(pod: Obj) -> str:
    from podplane_sandbox.kube.controllers.kuberay_logs import traceback_lines

    return "\n".join(traceback_lines(pod))
