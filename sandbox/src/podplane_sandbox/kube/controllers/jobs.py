"""Jobs -> Pods -> completion."""

from __future__ import annotations

from typing import Any

from podplane_sandbox.kube.controllers.framework import Controller, Key
from podplane_sandbox.kube.controllers.workloads import alive_pods, is_ready, pod_from_template
from podplane_sandbox.kube.util import clone

Obj = dict[str, Any]


class JobController(Controller):
    primary, owned = "batch/jobs", ("pods",)

    def reconcile(self, key: Key) -> float | None:
        job = self.primary_obj(key)
        if job is None or job["metadata"].get("deletionTimestamp"):
            return None
        spec, status = job["spec"], clone(job.get("status") or {})
        if any(
            c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
            for c in status.get("conditions") or []
        ):
            return None
        completions = int(spec.get("completions") or 1)
        parallelism = int(spec.get("parallelism", 1))
        pods = self.ctx.owned(job, "pods")
        phase = lambda p: (p.get("status") or {}).get("phase")  # noqa: E731
        succeeded = sum(1 for p in pods if phase(p) == "Succeeded")
        failed = sum(1 for p in pods if phase(p) == "Failed")
        active = alive_pods(pods)
        now = self.ctx.now_iso()
        status.setdefault("startTime", now)
        if failed > int(spec.get("backoffLimit", 6)):
            for p in active:
                self.ctx.delete("pods", p)
            status["conditions"] = _job_conditions(
                now, "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"
            )
            active = []
        elif succeeded >= completions:
            status["conditions"] = _job_conditions(
                now, "Complete", "CompletionsReached", "Reached expected number of succeeded pods"
            )
            status["completionTime"] = now
            self.ctx.event(job, "Completed", "Job completed")
        else:
            self._start_pods(job, pods, active, succeeded, completions, parallelism)
            active = alive_pods(self.ctx.owned(job, "pods"))
        status.update(
            active=len(active),
            succeeded=succeeded,
            failed=failed,
            ready=sum(1 for p in active if is_ready(p)),
            terminating=0,
        )
        self.ctx.update_status(self.primary, job, status)
        return None

    def _start_pods(
        self,
        job: Obj,
        pods: list[Obj],
        active: list[Obj],
        succeeded: int,
        completions: int,
        parallelism: int,
    ) -> None:
        indexed = job["spec"].get("completionMode") == "Indexed"
        done_or_running = {
            (p["metadata"].get("labels") or {}).get("batch.kubernetes.io/job-completion-index")
            for p in pods
            if (p.get("status") or {}).get("phase") == "Succeeded" or p in active
        }
        free = [str(i) for i in range(completions) if str(i) not in done_or_running]
        for n in range(min(parallelism - len(active), completions - succeeded - len(active))):
            extra = {
                "job-name": job["metadata"]["name"],
                "batch.kubernetes.io/job-name": job["metadata"]["name"],
                "controller-uid": job["metadata"]["uid"],
                "batch.kubernetes.io/controller-uid": job["metadata"]["uid"],
            }
            name = job["metadata"]["name"] + "-"
            if indexed and n < len(free):
                extra["batch.kubernetes.io/job-completion-index"] = free[n]
                name += f"{free[n]}-"
            self.ctx.create_pod(
                job, pod_from_template(job, job["spec"].get("template") or {}, name, extra)
            )


def _job_conditions(now: str, kind: str, reason: str, message: str) -> list[Obj]:
    target = "SuccessCriteriaMet" if kind == "Complete" else "FailureTarget"
    return [
        {
            "type": target,
            "status": "True",
            "reason": reason,
            "message": message,
            "lastProbeTime": now,
            "lastTransitionTime": now,
        },
        {
            "type": kind,
            "status": "True",
            "reason": reason,
            "message": message,
            "lastProbeTime": now,
            "lastTransitionTime": now,
        },
    ]
