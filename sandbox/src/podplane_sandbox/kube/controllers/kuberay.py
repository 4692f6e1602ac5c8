"""KubeRay's RayJob controller (ray.io/v1), as the `kuberay` feature installs it. Sources,
ray-project/kuberay `ray-operator/controllers/ray/rayjob_controller.go` (`Reconcile`'s switch on
`status.jobDeploymentStatus`), `common/job.go`, `utils/constant.go`, `utils/validation.go`:

- New (""): the finalizer `ray.io/rayjob-finalizer`, then `initRayJobStatusIfNeed`: `jobId` =
  spec.jobId or `<job>-<5 random>`, `rayClusterName` = `<job>-<5 random>` (or the
  clusterSelector's `ray.io/cluster`), `startTime`, jobDeploymentStatus `Initializing`.
- Initializing: the RayCluster is created from `spec.rayClusterSpec` with the RayJob's labels
  plus `ray.io/originated-from-cr-name`, `ray.io/originated-from-crd=RayJob`,
  `ray.io/job-submission-mode`, owned by the RayJob (`constructRayClusterForRayJob`, event
  `CreatedRayCluster`). Once its state is `ready`, `dashboardURL` is its head service's
  `<svc>.<ns>.svc.cluster.local:8265` and, in K8sJobMode (the default), the submitter
  Kubernetes Job is created (`createNewK8sJob`: named like the RayJob, backoffLimit 2 or
  `submitterConfig.backoffLimit`; container `ray-job-submitter`, the head's image, 500m/200Mi
  requests, 1/1Gi limits, restartPolicy Never, `/bin/bash -ce -- "<wait for the dashboard>;
  ray job submit --no-wait ... -- <entrypoint>; ray job logs --follow <id>"` with
  PYTHONUNBUFFERED, RAY_DASHBOARD_ADDRESS, RAY_JOB_SUBMISSION_ID), then `Running`.
- Running: the RayJob's own head Service `<job>-head-svc`; a Failed submitter Job fails the
  RayJob (reason `AppFailed` when the Ray job failed, else `SubmissionFailed`); `jobStatus`,
  `message` and `rayJobInfo` come from the Ray job (the dashboard's `GetJobInfo`), and the
  RayJob is `Complete` or `Failed` (reason `AppFailed`) only once the Ray job is terminal *and*
  the submitter Job has finished. `activeDeadlineSeconds` past -> `Failed`, `DeadlineExceeded`.
- `endTime` is set when the deployment status turns terminal (`updateRayJobStatus`); then
  `shutdownAfterJobFinishes` deletes the RayCluster (not the submitter Job: its driver logs stay)
  `ttlSecondsAfterFinished` seconds later (`handleShutdownAfterJobFinishes`).
- `spec.suspend` in Initializing or Running -> Suspending: the RayCluster and the submitter Job
  are deleted, then the Ray fields are reset and the status is `Suspended`; lifting it -> New.
- `spec.backoffLimit`: a Failed RayJob (not past its deadline) with `status.failed` below
  backoffLimit + 1 is Retrying instead: its RayCluster and submitter Job are deleted and it
  starts over as New, with a new cluster (`checkBackoffLimitAndUpdateStatusIfNeeded`);
  `status.failed` / `status.succeeded` count the attempts.
- Deleting the RayJob removes the finalizer; owner references take the RayCluster, the
  submitter Job and their pods. A spec `ValidateRayJobSpec` refuses -> `ValidationFailed`.

The Ray job itself (what the dashboard reports) is played by the submitter pod: submitted when
its container starts, PENDING for PENDING_SECONDS, RUNNING until the container ends (it follows
the job's logs until the job ends), then SUCCEEDED or FAILED with Ray's job messages. How long
the entrypoint runs and how it exits are sandbox annotations on the RayJob
(`sandbox.podplane.io/duration-seconds`, `sandbox.podplane.io/exit-code`; default 60 s, 0).
A driver that ends well saves its result from the head through the bucket mount, like rank 0 of
the other training jobs (s3_mounts.py); a refused write fails the Ray job with that error.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from podplane_sandbox.kube import s3_mounts
from podplane_sandbox.kube.controllers.framework import Controller, Key, owner_ref
from podplane_sandbox.kube.controllers.kuberay_cluster import (
    CLUSTERS,
    DASHBOARD_PORT,
    OPERATOR,
    dashboard_url,
    operator_ready,
)
from podplane_sandbox.kube.controllers.kuberay_rules import (
    ENTRYPOINT_EXIT,
    JOB_MESSAGES,
    LABELS,
    PENDING_SECONDS,
    backoff,
    failure_tail,
    submitter_template,
    validate,
)
from podplane_sandbox.kube.logs import container_end, container_start
from podplane_sandbox.kube.store import Event
from podplane_sandbox.kube.util import clone, iso, parse_iso

Obj = dict[str, Any]
JOBS = "ray.io/rayjobs"
FINALIZER = "ray.io/rayjob-finalizer"
REQUEUE = 3.0  # RayJobDefaultRequeueDuration
TERMINAL = ("Complete", "Failed", "ValidationFailed")


class RayJobs(Controller):
    primary = JOBS

    def keys_for(self, event: Event) -> Iterable[Key]:
        meta = event.obj["metadata"]
        ns = meta.get("namespace", "")
        if event.rt_key == JOBS:
            yield (ns, meta["name"])
        elif event.rt_key in (CLUSTERS, "batch/jobs", "services"):
            for ref in meta.get("ownerReferences") or []:
                if ref.get("controller") and ref.get("kind") == "RayJob":
                    yield (ns, ref["name"])
        elif event.rt_key == "apps/deployments" and (ns, meta["name"]) == OPERATOR:
            yield from self.initial_keys()

    def initial_keys(self) -> Iterable[Key]:
        if self.ctx.store.registry.by_key(JOBS) is None:
            return []
        return super().initial_keys()

    def reconcile(self, key: Key) -> float | None:
        if self.ctx.store.registry.by_key(JOBS) is None or not operator_ready(self.ctx):
            return None
        job = self.primary_obj(key)
        if job is None:
            return None
        if job["metadata"].get("deletionTimestamp"):
            self._finalizer(job, add=False)
            return None
        old = job.get("status") or {}
        status = clone(old)
        problem = validate(job)
        if problem:
            if old.get("jobDeploymentStatus") != "ValidationFailed":
                self.ctx.event(job, "InvalidRayJobSpec", problem, "Warning")
            status.update(jobDeploymentStatus="ValidationFailed", reason="ValidationFailed",
                          message=problem)
            self.ctx.update_status(JOBS, job, status)
            return None
        state = status.get("jobDeploymentStatus", "")
        after: float | None = REQUEUE
        if state == "":
            job = self._finalizer(job, add=True)
            self._init(job, status)
        elif state in ("Initializing", "Running") and _suspend(job):
            status["jobDeploymentStatus"] = "Suspending"
        elif state in ("Initializing", "Running") and self._past_deadline(job, status):
            pass
        elif state == "Initializing":
            self._initializing(job, status)
        elif state == "Running":
            self._running(job, status)
        elif state in ("Suspending", "Retrying"):
            self._suspending(job, status)
        elif state == "Suspended":
            if _suspend(job):
                return None
            status.update(jobStatus="", jobDeploymentStatus="")
        elif state in ("Complete", "Failed"):
            return self._finished(job, status)
        backoff(job, status)
        if status.get("jobDeploymentStatus") != state and \
                status.get("jobDeploymentStatus") in TERMINAL:
            status["endTime"] = self.ctx.now_iso()
        self.ctx.update_status(JOBS, job, status)
        return after

    def _finalizer(self, job: Obj, add: bool) -> Obj:
        have = list(job["metadata"].get("finalizers") or [])
        want = [f for f in have if f != FINALIZER] + ([FINALIZER] if add else [])
        if sorted(want) == sorted(have):
            return job
        new = clone(job)
        new["metadata"]["finalizers"] = want
        return self.ctx.update(JOBS, new)

    def _init(self, job: Obj, status: Obj) -> None:
        name, spec = job["metadata"]["name"], job["spec"]
        status.setdefault("jobId", spec.get("jobId") or f"{name}-{self._rand()}")
        selected = (spec.get("clusterSelector") or {}).get("ray.io/cluster")
        status.setdefault("rayClusterName", selected or f"{name}-{self._rand()}")
        status.setdefault("jobStatus", "")
        status.update(jobDeploymentStatus="Initializing", startTime=self.ctx.now_iso())

    def _rand(self) -> str:
        return self.ctx.store.random_token(5)

    def _past_deadline(self, job: Obj, status: Obj) -> bool:
        limit = job["spec"].get("activeDeadlineSeconds")
        started = parse_iso(status.get("startTime"))
        if limit is None or started is None or self.ctx.now() < started + int(limit):
            return False
        status.update(jobDeploymentStatus="Failed", reason="DeadlineExceeded",
                      message=f"The RayJob has passed the activeDeadlineSeconds. StartTime: "
                      f"{status['startTime']}. ActiveDeadlineSeconds: {limit}")
        return True

    def _cluster(self, job: Obj, status: Obj) -> Obj | None:
        """getOrCreateRayClusterInstance."""
        ns, name = job["metadata"]["namespace"], status["rayClusterName"]
        found = self.ctx.store.find(CLUSTERS, ns, name)
        if found is not None or job["spec"].get("clusterSelector"):
            if found is None:
                self.ctx.event(job, "RayClusterNotFound", f"RayCluster {ns}/{name} set in the "
                               "clusterSelector is not found. It must be created manually",
                               "Warning")
            return found
        spec = job["spec"]
        labels = {**(job["metadata"].get("labels") or {}),
                  LABELS[0]: job["metadata"]["name"], LABELS[1]: "RayJob",
                  "ray.io/job-submission-mode": spec.get("submissionMode") or "K8sJobMode"}
        made = self.ctx.create(CLUSTERS, {
            "apiVersion": "ray.io/v1", "kind": "RayCluster",
            "metadata": {"name": name, "namespace": ns, "labels": labels,
                         "annotations": dict(job["metadata"].get("annotations") or {}),
                         "ownerReferences": [owner_ref(job)]},
            "spec": clone(spec["rayClusterSpec"])})
        self.ctx.event(job, "CreatedRayCluster", f"Created RayCluster {ns}/{name}")
        return made

    def _initializing(self, job: Obj, status: Obj) -> None:
        cluster = self._cluster(job, status)
        if cluster is None:
            return
        if not status.get("dashboardURL"):
            if (cluster.get("status") or {}).get("state") != "ready":
                status["rayClusterStatus"] = clone(cluster.get("status") or {})
                return
            status["dashboardURL"] = dashboard_url(cluster)
        mode = job["spec"].get("submissionMode") or "K8sJobMode"
        if mode == "InteractiveMode":
            status["jobDeploymentStatus"] = "Waiting"
            return
        if mode == "K8sJobMode" and self._submitter(job) is None:
            self._create_submitter(job, cluster, status)
        status["jobDeploymentStatus"] = "Running"

    def _submitter(self, job: Obj) -> Obj | None:
        return self.ctx.store.find("batch/jobs", job["metadata"]["namespace"],
                                   job["metadata"]["name"])

    def _create_submitter(self, job: Obj, cluster: Obj, status: Obj) -> None:
        ns, name = job["metadata"]["namespace"], job["metadata"]["name"]
        template = submitter_template(job, cluster, status)
        limit = (job["spec"].get("submitterConfig") or {}).get("backoffLimit", 2)
        labels = {LABELS[0]: name, LABELS[1]: "RayJob",
                  "app.kubernetes.io/created-by": "kuberay-operator"}
        self.ctx.create("batch/jobs", {
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns, "labels": labels,
                         "ownerReferences": [owner_ref(job)]},
            "spec": {"backoffLimit": limit, "template": template}})
        self.ctx.event(job, "CreatedRayJobSubmitter", f"Created Kubernetes Job {ns}/{name}")

    def _running(self, job: Obj, status: Obj) -> None:
        cluster = self._cluster(job, status)
        if cluster is None:
            return
        if not job["spec"].get("clusterSelector"):
            self._job_service(job, cluster)
        finished_at = None
        if (job["spec"].get("submissionMode") or "K8sJobMode") == "K8sJobMode":
            submitter = self._submitter(job)
            if submitter is None:
                return
            failed = _condition(submitter, "Failed")
            if failed:
                status["jobDeploymentStatus"] = "Failed"
                if status.get("jobStatus") == "FAILED":
                    status["reason"] = "AppFailed"
                else:
                    status.update(reason="SubmissionFailed", message=(
                        f"Job submission has failed. Reason: {failed.get('reason')}. "
                        f"Message: {failed.get('message')}"))
                return
            done = _condition(submitter, "Complete")
            finished_at = done.get("lastTransitionTime") if done else None
        info = self._ray_job(job)
        if info is None:
            if finished_at:
                status.update(jobDeploymentStatus="Failed", reason="AppFailed",
                              message="Submitter completed but Ray job not found in "
                              "RayCluster.")
            return
        terminal = info["jobStatus"] in ("SUCCEEDED", "FAILED", "STOPPED") and finished_at
        status.update(rayClusterStatus=clone(cluster.get("status") or {}),
                      jobStatus=info["jobStatus"], message=info["message"],
                      rayJobInfo=info["rayJobInfo"], reason="")
        if terminal and info["jobStatus"] == "SUCCEEDED" and \
                (refused := self._save(cluster, info["rayJobInfo"])):
            status.update(jobStatus="FAILED", message=refused)
        if terminal:
            failed_job = status["jobStatus"] == "FAILED"
            status.update(jobDeploymentStatus="Failed" if failed_job else "Complete",
                          reason="AppFailed" if failed_job else "")
        if not status.get("reason"):
            status.pop("reason", None)

    def _save(self, cluster: Obj, info: Obj) -> str | None:
        """The driver (on the head) saves the trained model where the job told it to, through
        the head's bucket mount (s3_mounts.py); the write error, else None."""
        heads = [p for p in self.ctx.owned(cluster, "pods")
                 if (p["metadata"].get("labels") or {}).get("ray.io/node-type") == "head"]
        start, end = parse_iso(info.get("startTime")), parse_iso(info.get("endTime"))
        if not heads or start is None or end is None:
            return None
        return s3_mounts.write_outputs(self.ctx, heads[0], end - start)

    def _job_service(self, job: Obj, cluster: Obj) -> None:
        ns, name = job["metadata"]["namespace"], f"{job['metadata']['name']}-head-svc"
        if self.ctx.store.find("services", ns, name) is not None:
            return
        self.ctx.create("services", {
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": ns, "ownerReferences": [owner_ref(job)],
                         "labels": {LABELS[0]: job["metadata"]["name"], LABELS[1]: "RayJob",
                                    "ray.io/node-type": "head"}},
            "spec": {"type": "ClusterIP",
                     "selector": {"ray.io/cluster": cluster["metadata"]["name"],
                                  "ray.io/node-type": "head"},
                     "ports": [{"name": "dashboard", "port": DASHBOARD_PORT}]}})

    def _ray_job(self, job: Obj) -> Obj | None:
        """The Ray job as the dashboard reports it; None while it was not submitted."""
        submitter = self._submitter(job)
        pods = self.ctx.owned(submitter, "pods") if submitter else []
        started = [(container_start(p, _first(p)), p) for p in pods]
        started = [(t, p) for t, p in started if t is not None]
        if not started:
            return None
        start, pod = max(started, key=lambda tp: tp[0] or 0.0)
        end = container_end(pod, _first(pod))
        running_at = start + PENDING_SECONDS
        info: Obj = {"startTime": iso(running_at)}
        code = int((pod["metadata"].get("annotations") or {}).get(ENTRYPOINT_EXIT, "0"))
        if end is None:
            state = "PENDING" if self.ctx.now() < running_at else "RUNNING"
            message = JOB_MESSAGES[state]
            info = {} if state == "PENDING" else info
        else:
            info["endTime"] = iso(end)
            state = "SUCCEEDED" if code == 0 else "FAILED"
            message = JOB_MESSAGES[state] if code == 0 else (
                f"Job entrypoint command failed with exit code {code}, last available logs "
                f"(truncated to 20,000 chars):\n{failure_tail(pod)}")
        return {"jobStatus": state, "message": message, "rayJobInfo": info}

    def _suspending(self, job: Obj, status: Obj) -> None:
        ns = job["metadata"]["namespace"]
        gone = True
        if not job["spec"].get("clusterSelector") and status.get("rayClusterName"):
            cluster = self.ctx.store.find(CLUSTERS, ns, status["rayClusterName"])
            if cluster is not None:
                gone = False
                if not cluster["metadata"].get("deletionTimestamp"):
                    self.ctx.delete(CLUSTERS, cluster)
                    self.ctx.event(job, "DeletedRayCluster",
                                   f"Deleted cluster {ns}/{status['rayClusterName']}")
        submitter = self._submitter(job)
        if submitter is not None:
            gone = False
            if not submitter["metadata"].get("deletionTimestamp"):
                self.ctx.delete("batch/jobs", submitter)
                self.ctx.event(job, "DeletedRayJobSubmitter",
                               f"Deleted submitter K8s Job {ns}/{job['metadata']['name']}")
        if not gone:
            return
        for field in ("rayClusterStatus", "rayClusterName", "dashboardURL", "jobId",
                      "message", "reason", "rayJobInfo"):
            status.pop(field, None)
        retrying = status.get("jobDeploymentStatus") == "Retrying"
        status.update(jobStatus="", jobDeploymentStatus="" if retrying else "Suspended")

    def _finished(self, job: Obj, status: Obj) -> float | None:
        """handleShutdownAfterJobFinishes: the RayCluster goes ttl seconds after endTime."""
        spec = job["spec"]
        if spec.get("clusterSelector") or not spec.get("shutdownAfterJobFinishes"):
            return None
        ended = parse_iso(status.get("endTime")) or self.ctx.now()
        left = ended + int(spec.get("ttlSecondsAfterFinished") or 0) - self.ctx.now()
        if left > 0:
            return left
        ns, name = job["metadata"]["namespace"], status.get("rayClusterName", "")
        cluster = self.ctx.store.find(CLUSTERS, ns, name)
        if cluster is not None and not cluster["metadata"].get("deletionTimestamp"):
            self.ctx.delete(CLUSTERS, cluster)
            self.ctx.event(job, "DeletedRayCluster", f"Deleted cluster {ns}/{name}")
        return None


def _first(pod: Obj) -> str:
    return str(((pod.get("spec") or {}).get("containers") or [{}])[0].get("name", ""))


def _condition(job: Obj, kind: str) -> Obj | None:
    return next((c for c in (job.get("status") or {}).get("conditions") or []
                 if c.get("type") == kind and c.get("status") == "True"), None)


def _suspend(job: Obj) -> bool:
    return bool((job.get("spec") or {}).get("suspend"))
