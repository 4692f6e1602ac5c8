"""Why a training job failed, waits or hangs (pure): its Failed condition and restart budget,
each pod's container states (image pull, config, OOMKilled, a non-zero exit), what the failed
workers' last log lines say (job_logs.py: Xid, NCCL watchdog timeout, NCCL error, CUDA OOM),
hangs (job_hangs.py: silent pods, the operator's log-monitoring rules), scheduling events of
pods still Pending, and the health of the nodes its last fault named.

Sources: Kubernetes "Debug Pods" / container states (waiting reasons ErrImagePull,
ImagePullBackOff, CreateContainerConfigError; terminated reason OOMKilled, StartError (the
runtime could not exec the command: containerd's reason, runc's `executable file not found
in $PATH`, sandbox/.../image_contents.py cites the reports), exitCode), the
scheduler's FailedScheduling event; the job status fields of domain/jobs/views.py (the
HyperPod training operator's FIELDS.md, the Kubeflow PyTorchJob CRD); node health labels of
../shared/crds/hyperpod-node-labels.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from podplane.domain.diagnostics import job_hangs as hangs_of
from podplane.domain.diagnostics.job_logs import Hit, PodLog, hits, unread
from podplane.domain.diagnostics.job_logs import findings as log_findings
from podplane.domain.diagnostics.verdict import (
    Evidence,
    Finding,
    Status,
    SuggestedCall,
    Verdict,
    healthy,
)
from podplane.domain.jobs import views

Shape = dict[str, Any]
PULL = {"ErrImagePull", "ImagePullBackOff", "InvalidImageName"}
FAULTY = ("UnschedulablePendingReboot", "UnschedulablePendingReplacement")
EVENT, POD = "kubernetes:Event", "kubernetes:Pod status"
HEALTH = "sagemaker.amazonaws.com/node-health-status"


@dataclass(frozen=True)
class JobFacts:
    cluster: str
    job: Shape  # the HyperPodPyTorchJob or PyTorchJob as Kubernetes holds it
    pods: tuple[Shape, ...] = ()
    nodes: tuple[Shape, ...] = ()  # every Node (a pod's node, a faulty instance's node)
    events: tuple[Shape, ...] = ()  # about the job and its pods, oldest first
    logs: tuple[PodLog, ...] = ()  # tails of failed or restarted containers (job_logs.py)
    stall: Shape | None = None  # services/jobs/stall.py: every running pod silent
    spaces_holding_gpus: tuple[str, ...] = ()  # dev spaces whose running pods hold GPUs


# Which finding names the cause when several fail: a GPU fault explains a collective timeout,
# which explains the exit code, which explains the operator's failure condition.
CAUSES = ("xid", "node_fault", "nccl_timeout", "nccl_error", "cuda_oom", "oom_killed",
          "hang_rule", "stalled", "image_pull", "container_config", "exit_code",
          "pending_scheduling", "job_failed")


def diagnose(f: JobFacts) -> Verdict:
    name = f.job["metadata"]["name"]
    target = f"cluster/{f.cluster}/job/{name}"
    status = views.status_of(f.job)
    flagged = _nodes(f)
    found = hits(f.logs)
    hangs = [x for x in (hangs_of.rule_fired(f.job, list(f.events), list(f.pods)),
                         hangs_of.stalled(f.job, f.stall, list(f.pods))) if x]
    findings = _job_failed(f) + [x for pod in f.pods for x in _pod(f, pod)] + \
        log_findings(found) + hangs + [x for _, x in flagged]
    notes = tuple(unread(f.logs))
    if not findings:
        return healthy(target, f"The job is {status}.", *notes)
    ranked = sorted(findings, key=lambda x: (x.status is not Status.FAIL,
                                             CAUSES.index(x.check) if x.check in CAUSES
                                             else len(CAUSES)))
    since = (f.stall or {}).get("last_line_at") if ranked[0].check == "stalled" else None
    return Verdict(target, f"The job is {status}: {ranked[0].detail}", tuple(ranked),
                   _next(f, ranked, found, flagged), since=since, notes=notes)


def _next(f: JobFacts, ranked: list[Finding], found: list[Hit],
          flagged: list[tuple[str, Finding]]) -> SuggestedCall:
    name = f.job["metadata"]["name"]
    checks = {x.check for x in ranked}
    xid = next((h.log.node for h in found if h.check == "xid" and h.log.node), None)
    if xid or flagged:
        node = str(xid).removeprefix("hyperpod-") if xid else flagged[0][0]
        return SuggestedCall("diagnose_node", {"cluster": f.cluster, "node": node},
                             "None: reads the node; its verdict suggests the repair.", False)
    nodes = sorted({str((p.get("spec") or {}).get("nodeName")) for p in f.pods
                    if (p.get("spec") or {}).get("nodeName")})
    idle = views.status_of(f.job) in views.DONE
    if checks & {"nccl_timeout", "nccl_error"} and len(nodes) >= 2 and idle:
        return SuggestedCall("diagnose_nccl", {"cluster": f.cluster, "nodes": nodes},
                             "Runs a short all-reduce job on these nodes (all their GPUs, "
                             "a few minutes); they must be idle.", True)
    if "stalled" in checks:
        return SuggestedCall("job_cancel", {"cluster": f.cluster, "job": name},
                             "Stops every pod of the job and frees its GPUs; work since the "
                             "last checkpoint is lost.", True)
    if "pending_scheduling" in checks and f.spaces_holding_gpus:
        return SuggestedCall("space_get", {"cluster": f.cluster,
                                           "name": f.spaces_holding_gpus[0]},
                             "None: reads the space (is it in use?) before anyone stops it.",
                             False)
    if "pending_scheduling" in checks:
        return SuggestedCall("node_list", {"cluster": f.cluster}, "None: reads the nodes' "
                             "health and free GPUs.", False)
    return SuggestedCall("job_logs", {"cluster": f.cluster, "job": name, "tail": 50},
                         "None: reads the last lines of the job's pods.", False)


def _job_failed(f: JobFacts) -> list[Finding]:
    failed = next((c for c in views.conditions(f.job) if c.get("type") == "Failed"
                   and c.get("status") == "True"), None)
    if failed is None:
        return []
    spent = views.budget(f.job, list(f.pods))
    kind = f.job.get("kind")
    proof = [Evidence(f"kubernetes:{kind} status", f"Failed {failed.get('reason')}: "
                      f"{failed.get('message')}; restarts {spent['spent']} of "
                      f"{spent['budget']}")]
    proof += [_event(e) for e in f.events if e.get("type") == "Warning"
              and (e.get("involvedObject") or {}).get("kind") == kind][-3:]
    fix = ("Resubmit with a larger max_restarts once the cause is repaired."
           if spent["remaining"] == 0 and spent["budget"] >= 0 else "Read the pods' logs.")
    return [Finding("job_failed", Status.FAIL, f"{failed.get('reason')}: "
                    f"{failed.get('message')}", fix, tuple(proof))]


def _pod(f: JobFacts, pod: Shape) -> list[Finding]:
    name = pod["metadata"]["name"]
    status = pod.get("status") or {}
    out: list[Finding] = []
    for cs in status.get("containerStatuses") or []:
        waiting = (cs.get("state") or {}).get("waiting") or {}
        ended = (cs.get("state") or {}).get("terminated") or \
            (cs.get("lastState") or {}).get("terminated") or {}
        said = f"pod {name}, container {cs.get('name')}"
        if waiting.get("reason") in PULL:
            out.append(Finding("image_pull", Status.FAIL, f"{said} cannot pull its image "
                               f"({waiting['reason']}).", "Use an image the nodes can pull "
                               "(name, tag, registry access), then resubmit.",
                               (Evidence(POD, f"{said}: waiting {waiting['reason']}: "
                                         f"{waiting.get('message', '')}"),
                                *_events_of(f, name, "Failed"))))
        elif waiting.get("reason") == "CreateContainerConfigError":
            out.append(Finding("container_config", Status.FAIL, f"{said}: "
                               f"{waiting.get('message')}", "Create what it refers to (a "
                               "Secret or ConfigMap key), or fix the job.",
                               (Evidence(POD, f"{said}: waiting {waiting['reason']}"),)))
        elif ended.get("reason") == "OOMKilled":
            out.append(Finding("oom_killed", Status.FAIL, f"{said} ran out of memory "
                               "(OOMKilled).", "Lower the batch size or raise the memory "
                               "limit.", (_ended(said, ended),)))
        elif ended.get("reason") == "StartError":  # runc could not exec the command
            out.append(Finding("start_error", Status.FAIL, f"{said} could not start its "
                               f"command: {ended.get('message') or 'no message'}",
                               "Run a command the image has (or one the command installs "
                               "first), or use an image that has it; then resubmit.",
                               (_ended(said, ended),)))
        elif ended and int(ended.get("exitCode") or 0) != 0:
            out.append(Finding("exit_code", Status.FAIL, f"{said} exited with code "
                               f"{ended.get('exitCode')}.", "Read its last log lines "
                               "(job_logs).", (_ended(said, ended),)))
    if status.get("phase", "Pending") == "Pending" and not (pod.get("spec") or {}).get(
            "nodeName"):
        why = _events_of(f, name, "FailedScheduling")
        if why:
            held = f.spaces_holding_gpus
            out.append(Finding("pending_scheduling", Status.WARN, f"pod {name} cannot be "
                               "placed: " + why[-1].detail + (
                                   f" Dev spaces hold GPUs: {', '.join(held)}." if held
                                   else ""),
                               ("Stop an idle space (space_set desired=Stopped), free " if held
                                else "Free ") + "GPUs on healthy nodes (node_list), scale "
                               "the group, or ask for fewer replicas.", why[-1:]))
    return out


def _nodes(f: JobFacts) -> list[tuple[str, Finding]]:
    """(instance id, finding) for the nodes of the job's pods, and those its last fault
    named, that HyperPod flagged."""
    by_name = {n["metadata"]["name"]: n for n in f.nodes}
    fault = views.last_fault(f.job, list(f.events)) or {}
    names = [(p.get("spec") or {}).get("nodeName") for p in f.pods]
    names += [f"hyperpod-{i}" for i in fault.get("instance_ids") or []]
    out, seen = [], set()
    for name in names:
        node = by_name.get(name or "")
        if node is None or name in seen:
            continue
        seen.add(name)
        labels = node["metadata"].get("labels") or {}
        verdict = views.node_verdict(node)
        if labels.get(HEALTH) in FAULTY:
            iid = str(name).removeprefix("hyperpod-")
            out.append((iid, Finding("node_fault", Status.FAIL, f"Node {iid} is "
                               f"{labels[HEALTH]} (fault {verdict['fault']}).",
                               "Diagnose the node (diagnose_node), then repair it.",
                               (Evidence("kubernetes:Node labels", f"{name}: {HEALTH}="
                                         f"{labels[HEALTH]}, fault {verdict['fault']}"),))))
    return out


def _events_of(f: JobFacts, obj: str, reason: str) -> tuple[Evidence, ...]:
    return tuple(_event(e) for e in f.events if e.get("reason") == reason
                 and (e.get("involvedObject") or {}).get("name") == obj)


def _event(e: Shape) -> Evidence:
    return Evidence(EVENT, f"{e.get('reason')}: {e.get('message')}")


def _ended(said: str, ended: Shape) -> Evidence:
    return Evidence(POD, f"{said}: terminated {ended.get('reason')}, exit code "
                    f"{ended.get('exitCode')} at {ended.get('finishedAt')}")
