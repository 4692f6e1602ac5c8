"""How the HyperPod training operator reacts to faults, shared by its emulation
(training_operator.py). docs/sandbox.md, "HyperPod training operator", lists the rules:

- What is a fault: a pod of the job that failed (its process exited non-zero), or a pod whose
  node HyperPod marked `UnschedulablePendingReboot` / `UnschedulablePendingReplacement` (AWS
  docs, "SageMaker HyperPod node labels": nodes that failed health checks and are rebooted or
  replaced; "Using the HyperPod training operator": the operator watches node health and the
  job's pods and restarts the job away from faulty nodes).
- The budget: `spec.runPolicy.jobMaxRetryCount` (AWS docs, "Using the HyperPod training
  operator", job auto-resume: the number of restarts before the job is failed; AWS's reference
  job sets it, awslabs/awsome-distributed-training 3.test_cases/pytorch/FSDP/kubernetes/
  llama3_2_1b-fsdp-hpto.yaml). Unset counts as 0 (sources give no server default: the
  stricter reading).
- What the status says (FIELDS.md, status, from the SDK's `HyperPodPytorchJobStatus`):
  `restartCount` counts the restarts, `latestFaultyPodInstanceList` {restartType,
  faultyInstanceIdList, faultyPodList, faultyRankList} names the latest fault's pods, nodes and
  ranks. A restart here is job-level (`JLR`): every pod is deleted and made again, on the
  nodes the scheduler now allows (the faulty node is tainted NoSchedule).
- Sources are silent on reasons and messages: the sandbox writes a Warning event on the job
  (`JobRestarting`, then `JobFailed` past the budget) naming the node and its fault labels,
  and puts the same message on the Failed condition.
"""

from __future__ import annotations

from typing import Any

from podplane_sandbox.kube.controllers.framework import Ctx
from podplane_sandbox.kube.logs import NODE_RANK

Obj = dict[str, Any]
HEALTH = "sagemaker.amazonaws.com/node-health-status"
FAULTY = ("UnschedulablePendingReboot", "UnschedulablePendingReplacement")
FAULT_LABELS = ("sagemaker.amazonaws.com/fault-reasons", "sagemaker.amazonaws.com/fault-reason",
                "sagemaker.amazonaws.com/fault-types", "sagemaker.amazonaws.com/fault-type")


def suspended(job: Obj) -> bool:
    return bool(((job.get("spec") or {}).get("runPolicy") or {}).get("suspend"))


def faults_of(ctx: Ctx, pods: list[Obj]) -> list[tuple[Obj, str | None, str]]:
    """(pod, node, why) for each faulty pod of the job."""
    out = []
    for pod in pods:
        status = pod.get("status") or {}
        node_name = (pod.get("spec") or {}).get("nodeName")
        if status.get("phase") == "Succeeded":
            continue
        if status.get("phase") == "Failed":
            out.append((pod, node_name, f"pod {pod['metadata']['name']} failed "
                        f"({_exit(status)})"))
            continue
        node = ctx.store.find("nodes", "", node_name) if node_name else None
        labels = (node or {}).get("metadata", {}).get("labels") or {}
        if labels.get(HEALTH) in FAULTY:
            fault = next((labels[k] for k in FAULT_LABELS if labels.get(k)), "health check")
            out.append((pod, node_name, f"node {node_name} is {labels[HEALTH]} ({fault})"))
    return out


def _exit(status: Obj) -> str:
    for cs in status.get("containerStatuses") or []:
        done = (cs.get("state") or {}).get("terminated")
        if done:
            return f"exit code {done.get('exitCode')}, {done.get('reason', 'Error')}"
    return "Failed"


def restart_or_fail(ctx: Ctx, job: Obj, status: Obj, faults: list[tuple[Obj, str | None, str]],
                    pod_names: list[str]) -> bool:
    """Record the fault; True when the job restarts (the caller deletes its pods), False when
    the budget is spent and the job failed."""
    budget = int(((job.get("spec") or {}).get("runPolicy") or {}).get("jobMaxRetryCount") or 0)
    spent = int(status.get("restartCount") or 0)
    now = ctx.now_iso()
    status["latestFaultyPodInstanceList"] = {
        "restartType": "JLR",
        "faultyInstanceIdList": sorted({_instance(n) for _, n, _ in faults if n}),
        "faultyPodList": [p["metadata"]["name"] for p, _, _ in faults],
        "faultyRankList": [str((p["metadata"].get("annotations") or {}).get(NODE_RANK, ""))
                           for p, _, _ in faults]}
    cause = "; ".join(why for _, _, why in faults)
    set_condition(status, "Running", False, now, only_if_present=True)
    if spent < budget:
        status["restartCount"] = spent + 1
        ctx.event(job, "JobRestarting", f"restart {spent + 1} of {budget}: {cause}", "Warning")
        return True
    message = f"restart budget spent ({spent} of {budget}): {cause}"
    set_condition(status, "Failed", True, now, reason="MaxRetryCountExceeded", message=message)
    ctx.event(job, "JobFailed", message, "Warning")
    return False


def _instance(node_name: str) -> str:
    return node_name.removeprefix("hyperpod-")


def set_condition(status: Obj, kind: str, value: bool, now: str, only_if_present: bool = False,
                  reason: str | None = None, message: str | None = None) -> None:
    """Set a condition, keeping its place and its transition time when unchanged."""
    conditions = status.setdefault("conditions", [])
    flag = "True" if value else "False"
    extra = {k: v for k, v in (("reason", reason), ("message", message)) if v}
    for c in conditions:
        if c.get("type") == kind:
            if c.get("status") != flag:
                c.update(status=flag, lastTransitionTime=now)
            c.update(extra)
            return
    if not only_if_present:
        conditions.append({"type": kind, "status": flag, "lastTransitionTime": now, **extra})
