"""A kubelet: starts containers, runs them for their simulated duration, reports status.

A container whose image lacks the program it is asked to run (kube/image_contents.py, with its
sources) exits at once: `StartError` 128 when runc cannot exec it (no `Started` event, a
`Failed` one with the runtime's message), or the shell's 127; then the pod's restart policy
applies as to any exit (`CrashLoopBackOff`, or `Failed` under `Never`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from podplane_sandbox.kube import (
    container_shell,  # what a model download's `sh -c` does to files
    fsx_mounts,  # FSx for Lustre volumes
    image_contents,  # which executables an image has
    mlflow_runs,  # training runs logged to SageMaker MLflow
    s3_mounts,
)
from podplane_sandbox.kube.controllers import pod_start
from podplane_sandbox.kube.controllers.framework import Controller, Ctx, Key
from podplane_sandbox.kube.pod_termination import terminations_of
from podplane_sandbox.kube.s3_mounts import mount_problem  # Mountpoint for S3 volumes
from podplane_sandbox.kube.store import Event
from podplane_sandbox.kube.util import clone, iso, parse_iso

Obj = dict[str, Any]
START_SECONDS = 2.0
DURATION = "sandbox.podplane.io/duration-seconds"
EXIT_CODE = "sandbox.podplane.io/exit-code"
JOB_DEFAULT_SECONDS = 30.0
RETRY_SECONDS = 10.0  # kubelet re-syncs a pod that cannot start yet


def _pod_ip(pod: Obj) -> str:
    h = hashlib.sha256(pod["metadata"]["uid"].encode()).digest()
    return f"10.2.{h[0]}.{max(h[1], 1)}"


def run_seconds(pod: Obj) -> float | None:
    """How long the containers run before exiting; None for long-running servers."""
    ann = pod["metadata"].get("annotations") or {}
    if DURATION in ann:
        return float(ann[DURATION])
    owners = {r.get("kind") for r in pod["metadata"].get("ownerReferences") or []}
    if "Job" in owners or pod.get("spec", {}).get("restartPolicy") in ("Never", "OnFailure"):
        return JOB_DEFAULT_SECONDS
    return None


class Kubelet(Controller):
    primary = "pods"

    def __init__(self, ctx: Ctx) -> None:
        super().__init__(ctx)
        self.orphaned: set[Key] = set()  # pods whose node was deleted (pod GC removes them)
        self.blocked: dict[Key, str] = {}  # pods that cannot start yet -> last reason shown
        self.pulls: dict[Key, int] = {}  # failed image pulls per pod (back-off)
        self.start_at: dict[Key, float] = {}  # when a once-blocked pod's containers start
        self.retry_at: dict[Key, float] = {}  # next check of a blocked pod

    def keys_for(self, event: Event) -> Iterable[Key]:
        if (
            event.rt_key == "pods"
            and event.type != "DELETED"
            and (event.obj.get("spec", {}).get("nodeName"))
        ):
            meta = event.obj["metadata"]
            yield (meta.get("namespace", ""), meta["name"])
        elif event.rt_key == "nodes" and event.type == "DELETED":
            for pod in self.ctx.store.items("pods"):
                if pod.get("spec", {}).get("nodeName") == event.obj["metadata"]["name"]:
                    key = (pod["metadata"].get("namespace", ""), pod["metadata"]["name"])
                    self.orphaned.add(key)
                    yield key

    def reconcile(self, key: Key) -> float | None:
        pod = self.primary_obj(key)
        if pod is None or not pod.get("spec", {}).get("nodeName"):
            for pending in (self.blocked, self.pulls, self.start_at, self.retry_at):
                pending.pop(key, None)
            return None
        node = self.ctx.store.find("nodes", "", pod["spec"]["nodeName"])
        gone = key in self.orphaned and node is None
        self.orphaned.discard(key)
        if pod["metadata"].get("deletionTimestamp") or gone:
            # preStop, SIGTERM, the grace period (pod_termination.py, with its sources)
            wait = None if gone else terminations_of(self.ctx.store).until_gone(pod, self.ctx.now())
            if wait is None and not pod["metadata"].get("finalizers"):
                self.ctx.store.remove_now(self.ctx.rt("pods"), pod)
            return wait
        if node is None:
            return None
        status = pod.get("status") or {}
        phase = status.get("phase", "Pending")
        if phase in ("Succeeded", "Failed"):
            return None
        now = self.ctx.now()
        scheduled = _cond_time(status, "PodScheduled") or now
        if phase == "Pending":
            wait = self._blocked(key, pod, node)
            if wait is not None:
                return wait
            start = max(scheduled + START_SECONDS, self.start_at.get(key, 0.0))
            if now < start:
                self._creating(pod, node)
                return start - now
            self.start_at.pop(key, None)
            self._running(pod, node, start)
            return self._until_exit(pod, start)
        first = (status.get("containerStatuses") or [{}])[0]
        state = first.get("state") or {}
        if "waiting" in state and first.get("lastState", {}).get("terminated"):
            restart_at = _restart_at(first)
            if now < restart_at:
                return restart_at - now
            self._restart(pod, restart_at)
            return self._until_exit(pod, restart_at)
        started = parse_iso((state.get("running") or {}).get("startedAt"))
        return self._until_exit(pod, started or parse_iso(status.get("startTime")) or now)

    def _blocked(self, key: Key, pod: Obj, node: Obj) -> float | None:
        """Seconds until the next try when the pod cannot start yet (mounts, config, image)."""
        now = self.ctx.now()
        if self.retry_at.get(key, 0.0) > now:  # woken by our own status write: not yet
            return self.retry_at[key] - now
        wait = self._check(key, pod, node)
        if wait is None:
            self.retry_at.pop(key, None)
        else:
            self.retry_at[key] = now + wait
        return wait

    def _check(self, key: Key, pod: Obj, node: Obj) -> float | None:
        mount = (pod_start.missing_volume(pod, self.ctx.store) or mount_problem(self.ctx, pod)
                 or fsx_mounts.mount_problem(self.ctx, pod))
        if mount:
            self._wait_all(key, pod, node, "ContainerCreating", None, ("FailedMount", mount))
            return RETRY_SECONDS
        config = pod_start.first_config_error(pod, self.ctx.store)
        if config:
            name, message = config
            self._wait_all(key, pod, node, "CreateContainerConfigError", message,
                           ("Failed", f"Error: {message}"), only=name)
            return RETRY_SECONDS
        pull = pod_start.first_pull_error(pod, node, self.ctx.node_source)
        if pull:
            return self._pull_failed(key, pod, node, *pull)
        if key in self.blocked:  # cleared: the containers start from now
            del self.blocked[key]
            self.pulls.pop(key, None)
            self.start_at[key] = self.ctx.now() + START_SECONDS
        return None

    def _pull_failed(self, key: Key, pod: Obj, node: Obj, name: str, image: str,
                     error: str) -> float:
        """ErrImagePull on the failed attempt, ImagePullBackOff while backing off (kubelet)."""
        attempts = self.pulls.get(key, 0)
        if self.blocked.get(key) == "ErrImagePull":
            self._wait_all(key, pod, node, "ImagePullBackOff", f'Back-off pulling image "{image}"',
                           ("BackOff", f'Back-off pulling image "{image}"'), only=name)
            return backoff(attempts)
        self.pulls[key] = attempts + 1
        self.ctx.event(pod, "Pulling", f'Pulling image "{image}"')
        self.ctx.event(pod, "Failed", f'Failed to pull image "{image}": {error}', "Warning")
        self._wait_all(key, pod, node, "ErrImagePull", error,
                       ("Failed", "Error: ErrImagePull"), only=name)
        return 1.0

    def _wait_all(self, key: Key, pod: Obj, node: Obj, reason: str, message: str | None,
                  event: tuple[str, str], only: str | None = None) -> None:
        """Containers waiting (`only` with `reason`, the rest ContainerCreating); one event per
        change of reason."""
        status = self._base_status(pod, node)
        status["phase"] = "Pending"
        waiting = {"reason": reason, **({"message": message} if message else {})}
        statuses = self._container_statuses(pod, {"waiting": {"reason": "ContainerCreating"}},
                                            False)
        for cs in statuses:
            if only is None or cs["name"] == only:
                cs["state"] = {"waiting": waiting}
        status["containerStatuses"] = statuses
        self.ctx.update_status("pods", pod, status)
        if self.blocked.get(key) != reason:
            self.ctx.event(pod, event[0], event[1], "Warning")
        self.blocked[key] = reason

    def _until_exit(self, pod: Obj, started: float) -> float | None:
        failure = image_contents.first_failure(pod)
        seconds = 0.0 if failure else run_seconds(pod)  # it could not run its program
        if seconds is None:
            return None
        left = started + seconds - self.ctx.now()
        if left > 0:
            return left
        pod = self.primary_obj((pod["metadata"]["namespace"], pod["metadata"]["name"])) or pod
        code = failure[1].exit_code if failure else \
            int((pod["metadata"].get("annotations") or {}).get(EXIT_CODE, "0"))
        policy = pod["spec"].get("restartPolicy", "Always")
        if policy == "Never" or (policy == "OnFailure" and code == 0):
            self._exit(pod, started, started + seconds)
            return None
        return self._crash(pod, started, started + seconds, code)

    def _crash(self, pod: Obj, started: float, finished: float, code: int) -> float:
        """The container exited and will be restarted after a back-off (CrashLoopBackOff)."""
        status = clone(pod.get("status") or {})
        restarts = int((status.get("containerStatuses") or [{}])[0].get("restartCount", 0)) + 1
        wait = backoff(restarts)
        name, ns = pod["metadata"]["name"], pod["metadata"]["namespace"]
        last = {"terminated": _terminated(pod, code, started, finished)}
        statuses = []
        for cs in self._container_statuses(pod, {}, False, restarts, last):
            cs["state"] = {
                "waiting": {
                    "reason": "CrashLoopBackOff",
                    "message": f"back-off {int(wait)}s restarting failed "
                    f"container={cs['name']} pod={name}_{ns}",
                }
            }
            statuses.append(cs)
        status["containerStatuses"] = statuses
        status["conditions"] = _conditions(status, iso(finished), ready=False)
        self.ctx.update_status("pods", pod, status)
        self.ctx.event(pod, "BackOff", "Back-off restarting failed container", "Warning")
        return finished + wait - self.ctx.now()

    def _restart(self, pod: Obj, at: float) -> None:
        status = clone(pod.get("status") or {})
        first = (status.get("containerStatuses") or [{}])[0]
        status["containerStatuses"] = self._container_statuses(
            pod,
            {"running": {"startedAt": iso(at)}},
            True,
            int(first.get("restartCount", 0)),
            first.get("lastState") or {},
        )
        status["conditions"] = _conditions(status, iso(at), ready=True)
        self.ctx.update_status("pods", pod, status)

    def _base_status(self, pod: Obj, node: Obj) -> Obj:
        status = clone(pod.get("status") or {})
        host = next(
            (
                a["address"]
                for a in (node.get("status") or {}).get("addresses") or []
                if a.get("type") == "InternalIP"
            ),
            "10.1.0.1",
        )
        status.update(
            hostIP=host, hostIPs=[{"ip": host}], podIP=_pod_ip(pod), podIPs=[{"ip": _pod_ip(pod)}]
        )
        status.setdefault("qosClass", "Burstable")
        return status

    def _container_statuses(
        self, pod: Obj, state: Obj, ready: bool, restarts: int = 0, last: Obj | None = None
    ) -> list[Obj]:
        return [
            {
                "name": c["name"],
                "image": c.get("image", ""),
                "imageID": f"{c.get('image', '')}@sha256:"
                + hashlib.sha256(c.get("image", "").encode()).hexdigest(),
                "containerID": "containerd://"
                + hashlib.sha256((pod["metadata"]["uid"] + c["name"]).encode()).hexdigest(),
                "ready": ready,
                "started": "running" in state,
                "restartCount": restarts,
                "state": state,
                "lastState": last or {},
            }
            for c in pod.get("spec", {}).get("containers") or []
        ]

    def _creating(self, pod: Obj, node: Obj) -> None:
        status = self._base_status(pod, node)
        status["phase"] = "Pending"
        if _cond_time(status, "PodScheduled") is None:  # bound directly (DaemonSet, nodeName)
            status["conditions"] = [
                c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"
            ] + [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": self.ctx.now_iso()}
            ]
        status["containerStatuses"] = self._container_statuses(
            pod, {"waiting": {"reason": "ContainerCreating"}}, False
        )
        self.ctx.update_status("pods", pod, status)

    def _running(self, pod: Obj, node: Obj, started: float) -> None:

        status = self._base_status(pod, node)
        at = iso(started)
        status.update(phase="Running", startTime=at)
        status["containerStatuses"] = self._container_statuses(
            pod, {"running": {"startedAt": at}}, True
        )
        status["conditions"] = _conditions(status, at, ready=True)
        self.ctx.update_status("pods", pod, status)
        failure = image_contents.first_failure(pod)
        if failure and not failure[1].started:  # runc could not exec the program
            self.ctx.event(pod, "Failed", f"Error: {failure[1].message}", "Warning")
            return
        self.ctx.event(
            pod,
            "Started",
            "Started container " + ",".join(c["name"] for c in pod["spec"].get("containers") or []),
        )

    def _exit(self, pod: Obj, started: float, finished: float) -> None:
        failure = image_contents.first_failure(pod)
        code = failure[1].exit_code if failure else \
            int((pod["metadata"].get("annotations") or {}).get(EXIT_CODE, "0"))
        if code == 0:
            code = container_shell.run(self.ctx, pod) or 0
        if code == 0 and (refused := s3_mounts.write_outputs(self.ctx, pod, finished - started)):
            code = 1  # the training process could not save its result (s3_mounts.py)
            self.ctx.event(pod, "OutputWriteFailed", refused, "Warning")
        if not failure and (refused := mlflow_runs.log(self.ctx, pod, started, finished,
                                                       code == 0)):
            code = 1  # the MLflow client raised (kube/mlflow_runs.py)
            self.ctx.event(pod, "MlflowLoggingFailed", refused, "Warning")
        status = clone(pod.get("status") or {})
        status["phase"] = "Succeeded" if code == 0 else "Failed"
        state = {"terminated": _terminated(pod, code, started, finished)}
        status["containerStatuses"] = self._container_statuses(pod, state, False)
        status["conditions"] = _conditions(status, iso(finished), ready=False)
        self.ctx.update_status("pods", pod, status)


def _terminated(pod: Obj, code: int, started: float, finished: float) -> Obj:
    """A container's terminated state; the runtime's reason and message when it could not run
    its program (image_contents.py)."""
    failure = image_contents.first_failure(pod)
    reason = failure[1].reason if failure else ("Completed" if code == 0 else "Error")
    state: Obj = {"exitCode": code, "reason": reason, "startedAt": iso(started),
                  "finishedAt": iso(finished)}
    if failure and failure[1].message:
        state["message"] = failure[1].message
    return state


def backoff(restarts: int) -> float:
    """The kubelet's crash-loop back-off: 10s doubling per restart, capped at five minutes."""
    return float(min(10 * 2 ** (restarts - 1), 300))


def _restart_at(container_status: Obj) -> float:
    finished = parse_iso(container_status["lastState"]["terminated"].get("finishedAt")) or 0.0
    return finished + backoff(int(container_status.get("restartCount", 1)))


def _cond_time(status: Obj, kind: str) -> float | None:
    for c in status.get("conditions") or []:
        if c.get("type") == kind and c.get("status") == "True":
            return parse_iso(c.get("lastTransitionTime"))
    return None


def _conditions(status: Obj, at: str, ready: bool) -> list[Obj]:
    scheduled = next(
        (c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"),
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": at},
    )
    flag = "True" if ready else "False"
    extra = {} if ready else {"reason": "PodCompleted"}
    return [
        {"type": "PodReadyToStartContainers", "status": flag, "lastTransitionTime": at},
        {"type": "Initialized", "status": "True", "lastTransitionTime": at, **extra},
        {"type": "Ready", "status": flag, "lastTransitionTime": at, **extra},
        {"type": "ContainersReady", "status": flag, "lastTransitionTime": at, **extra},
        scheduled,
    ]
