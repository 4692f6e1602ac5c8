"""Why a self-managed inference endpoint does not serve (pure): its Deployment, the pods of
its template, the Service in front of them, the events about them and the last lines of a
crashing engine.

Sources: Kubernetes docs "Debug Pods" and "Pod Lifecycle" (waiting reasons ErrImagePull,
ImagePullBackOff, InvalidImageName, CrashLoopBackOff, CreateContainerConfigError; lastState
terminated reason OOMKilled), "Configure Liveness, Readiness and Startup Probes" (a failing
readiness probe: kubelet's `Unhealthy` event "Readiness probe failed: ..."; a pod not Ready
is taken out of the Service's endpoints), "Deployments" ("Failed Deployment": condition
Progressing False with reason ProgressDeadlineExceeded; status.updatedReplicas), the
scheduler's FailedScheduling event, and "Service" / EndpointSlices (the ready endpoints of a
Service are the pods its selector matches whose Ready condition is True and that are not
terminating; with none, the API server's service proxy answers 503).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from podplane.domain.diagnostics.job_logs import PodLog, hits, unread
from podplane.domain.diagnostics.job_logs import findings as log_findings
from podplane.domain.diagnostics.verdict import (
    Evidence,
    Finding,
    Status,
    SuggestedCall,
    Verdict,
    healthy,
)
from podplane.domain.inference.engines import ENGINES
from podplane.domain.inference.render import ENGINE_LABEL

Shape = dict[str, Any]
PULL = {"ErrImagePull", "ImagePullBackOff", "InvalidImageName"}
EVENT, POD, DEP, SVC = ("kubernetes:Event", "kubernetes:Pod status",
                        "kubernetes:Deployment status", "kubernetes:Service")
CAUSES = ("image_pull", "cuda_oom", "oom_killed", "crash_loop", "container_config",
          "pending_scheduling", "readiness", "rollout_stuck", "scaled_to_zero", "no_service",
          "no_ready_endpoints", "starting")


@dataclass(frozen=True)
class EndpointFacts:
    cluster: str
    deployment: Shape
    service: Shape | None
    pods: tuple[Shape, ...] = ()  # the pods the Deployment's selector matches
    events: tuple[Shape, ...] = ()  # about the Deployment and its pods, oldest first
    logs: tuple[PodLog, ...] = ()  # previous runs of crashing engines
    router_pods: tuple[Shape, ...] = ()  # an SGLang router's pods (the Service's target)


def diagnose(f: EndpointFacts) -> Verdict:
    name = f.deployment["metadata"]["name"]
    target = f"cluster/{f.cluster}/endpoint/{name}"
    live = [p for p in f.pods if not p["metadata"].get("deletionTimestamp")]
    findings = [x for p in live for x in _pod(f, p)] + log_findings(hits(f.logs)) + \
        _deployment(f, live) + _service(f, live)
    notes = tuple(unread(f.logs))
    if not findings:
        return healthy(target, f"{_ready(live)} of {_wanted(f)} replicas Ready behind "
                       f"Service {name}.", *notes)
    ranked = sorted(findings, key=lambda x: (x.status is not Status.FAIL, CAUSES.index(x.check)
                                             if x.check in CAUSES else len(CAUSES)))
    cause = ranked[0].detail
    return Verdict(target, cause[:1].upper() + cause[1:], tuple(ranked), _next(f, ranked, live),
                   notes=notes)


def _wanted(f: EndpointFacts) -> int:
    return int((f.deployment.get("spec") or {}).get("replicas", 1))


def ready(pod: Shape) -> bool:
    conds = (pod.get("status") or {}).get("conditions") or []
    return not pod["metadata"].get("deletionTimestamp") and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in conds)


def _ready(pods: list[Shape]) -> int:
    return sum(ready(p) for p in pods)


def _pod(f: EndpointFacts, pod: Shape) -> list[Finding]:
    name, node = pod["metadata"]["name"], (pod.get("spec") or {}).get("nodeName")
    status = pod.get("status") or {}
    out: list[Finding] = []
    for cs in status.get("containerStatuses") or []:
        waiting = (cs.get("state") or {}).get("waiting") or {}
        last = (cs.get("lastState") or {}).get("terminated") or {}
        said = f"pod {name} (node {node}), container {cs.get('name')}"
        state = Evidence(POD, f"{said}: waiting {waiting.get('reason')}: "
                         f"{waiting.get('message', '')}")
        if waiting.get("reason") in PULL:
            out.append(Finding("image_pull", Status.FAIL, f"{said} cannot pull image "
                               f"{cs.get('image')} ({waiting['reason']}).", "Update the "
                               "endpoint to an image the nodes can pull.",
                               (state, *[e for e in _events_of(f, name, "Failed")  # not
                                         # kubelet's "Error: ErrImagePull", which repeats it
                                         if "Error: " not in e.detail][-1:])))
        elif waiting.get("reason") == "CreateContainerConfigError":
            out.append(Finding("container_config", Status.FAIL, f"{said}: "
                               f"{waiting.get('message')}", "Create what it refers to.",
                               (state,)))
        elif last.get("reason") == "OOMKilled":
            out.append(Finding("oom_killed", Status.FAIL, f"{said} was killed for memory "
                               "(OOMKilled).", "Give the pod more memory or load a smaller "
                               "model.", (state, _ended(said, cs, last))))
        elif waiting.get("reason") == "CrashLoopBackOff":
            out.append(Finding("crash_loop", Status.FAIL, f"{said} keeps crashing (exit code "
                               f"{last.get('exitCode')}, {cs.get('restartCount', 0)} "
                               "restarts).", "Read its previous run's last lines (quoted "
                               "here when they name a known fault).",
                               (state, _ended(said, cs, last))))
    out += _placement(f, pod, status)
    return out


def _placement(f: EndpointFacts, pod: Shape, status: Shape) -> list[Finding]:
    name = pod["metadata"]["name"]
    statuses = status.get("containerStatuses") or []
    if status.get("phase", "Pending") == "Pending" and not (pod.get("spec") or {}).get(
            "nodeName"):
        why = _events_of(f, name, "FailedScheduling")
        if why:
            return [Finding("pending_scheduling", Status.FAIL, f"pod {name} cannot be placed: "
                            + why[-1].detail.removeprefix("FailedScheduling: "),
                            "Ask for fewer replicas, free GPUs, or scale the instance group.",
                            why[-1:])]
        return []
    running = statuses and all("running" in (c.get("state") or {}) for c in statuses)
    if running and not ready(pod):
        probe = _events_of(f, name, "Unhealthy")
        if probe:
            return [Finding("readiness", Status.FAIL, f"pod {name} fails its readiness probe: "
                            + probe[-1].detail.removeprefix("Unhealthy: "), "The engine "
                            "does not answer its health path: read its log.", probe[-1:])]
        return [Finding("starting", Status.WARN, f"pod {name} runs but is not Ready yet "
                        "(loading the model?).", "Wait, then diagnose again.",
                        (Evidence(POD, f"pod {name}: Running, Ready False"),))]
    return []


def _deployment(f: EndpointFacts, live: list[Shape]) -> list[Finding]:
    dep = f.deployment
    status = dep.get("status") or {}
    wanted, updated = _wanted(f), int(status.get("updatedReplicas") or 0)
    progressing: Shape = next((c for c in status.get("conditions") or []
                        if c.get("type") == "Progressing"), {})
    proof = Evidence(DEP, f"spec.replicas {wanted}; status replicas "
                     f"{status.get('replicas')}, updated {updated}, ready "
                     f"{int(status.get('readyReplicas') or 0)}; Progressing "
                     f"{progressing.get('status')} {progressing.get('reason')}")
    if wanted == 0:
        return [Finding("scaled_to_zero", Status.WARN, "the endpoint is scaled to zero: no "
                        "pod serves.", "Scale it up (endpoint_scale).", (proof,))]
    # A rolling update in flight: pods of two templates (status.replicas counts both), or
    # fewer of the new template than wanted, while a pod is not Ready.
    total = int(status.get("replicas") or 0)
    if progressing.get("reason") == "ProgressDeadlineExceeded" or (
            (updated < wanted or total > wanted) and any(not ready(p) for p in live)):
        return [Finding("rollout_stuck", Status.WARN, f"the rollout of the Deployment's "
                        f"template is stuck: {updated} pod(s) of the new template, "
                        f"{total} in all, for {wanted} replica(s).",
                        "Fix what holds the new pods, or go back to the previous image.",
                        (proof,))]
    return []


def _service(f: EndpointFacts, live: list[Shape]) -> list[Finding]:
    name = f.deployment["metadata"]["name"]
    if f.service is None:
        return [Finding("no_service", Status.FAIL, f"Service {name} is missing: nothing "
                        "routes requests to the pods.", "Delete and create the endpoint "
                        "again.", (Evidence(SVC, f"no Service {name} made by podplane"),))]
    selector = (f.service.get("spec") or {}).get("selector") or {}
    targets = live + [p for p in f.router_pods if not p["metadata"].get("deletionTimestamp")]
    behind = [p for p in targets if selector and all(
        (p["metadata"].get("labels") or {}).get(k) == v for k, v in selector.items())]
    if _wanted(f) == 0 or any(ready(p) for p in behind):
        return []
    listed = ", ".join(f"{p['metadata']['name']} Ready={ready(p)}" for p in behind) or "none"
    return [Finding("no_ready_endpoints", Status.FAIL, f"Service {name} has no ready "
                    "endpoint: requests get 503.", "Make a pod Ready (see the other "
                    "findings).", (Evidence(SVC, f"selector {selector}; pods it matches: "
                                            f"{listed}"),))]


def _next(f: EndpointFacts, ranked: list[Finding], live: list[Shape]) -> SuggestedCall:
    name = f.deployment["metadata"]["name"]
    args = {"cluster": f.cluster, "name": name}
    cause = ranked[0].check
    image = _good_image(f, live)
    if cause == "image_pull" and image:
        return SuggestedCall("endpoint_update", {**args, "image": image}, "A rolling update "
                             "to an image that pulls (the Ready pods' image, else the engine's "
                             "pinned default), then one real request; a failure rolls back. "
                             "It needs one free GPU for the new pod.", True)
    placed = sum(1 for p in live if (p.get("spec") or {}).get("nodeName"))
    if cause == "pending_scheduling" and placed:
        return SuggestedCall("endpoint_scale", {**args, "replicas": placed}, f"Serves with "
                             f"{placed} replica(s), the pods the cluster could place.", True)
    if cause == "scaled_to_zero":
        return SuggestedCall("endpoint_scale", {**args, "replicas": 1}, "Starts one pod; it "
                             "takes GPUs and loads the model.", True)
    if cause == "pending_scheduling":
        return SuggestedCall("node_list", {"cluster": f.cluster}, "None: reads the nodes' "
                             "health and free GPUs.", False)
    return SuggestedCall("endpoint_get", args, "None: reads the endpoint's pods and replicas.",
                         False)


def _good_image(f: EndpointFacts, live: list[Shape]) -> str | None:
    """The image Ready pods run, else the engine's pinned default, unless it is the one
    that cannot pull."""
    serving = sorted({_image(p) for p in live if ready(p)} - {""})
    engine = ENGINES.get((f.deployment["metadata"].get("labels") or {}).get(ENGINE_LABEL, ""))
    failing = {_image(p) for p in live if not ready(p)}
    choice = serving[0] if serving else engine.image if engine else None
    return choice if choice and choice not in failing else None


def _image(pod: Shape) -> str:
    containers = (pod.get("spec") or {}).get("containers") or [{}]
    return str(containers[0].get("image") or "")


def _events_of(f: EndpointFacts, obj: str, reason: str) -> tuple[Evidence, ...]:
    return tuple(Evidence(EVENT, f"{e.get('reason')}: {e.get('message')}") for e in f.events
                 if e.get("reason") == reason
                 and (e.get("involvedObject") or {}).get("name") == obj)


def _ended(said: str, cs: Shape, last: Shape) -> Evidence:
    return Evidence(POD, f"{said}: last run terminated {last.get('reason')}, exit code "
                    f"{last.get('exitCode')} at {last.get('finishedAt')}; restarts "
                    f"{cs.get('restartCount', 0)}")
