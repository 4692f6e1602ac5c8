"""The sandbox's graceful pod termination rules (pod_termination.py), as Kubernetes documents
them ("Pod Lifecycle", Termination of Pods) and as each engine's source handles SIGTERM:
the grace period comes from the delete, else the pod (default 30); the preStop sleep runs
first, cut by the grace period with one 2 s extension; vLLM aborts what is in flight at SIGTERM
unless `--shutdown-timeout`; SGLang drains on its 5 s watchdog; a deleted pod stays routed for
the propagation delay and refuses connections from SIGTERM on."""

from __future__ import annotations

from typing import Any

import pytest

from podplane_sandbox.kube.pod_termination import (
    Terminations,
    ending_of,
    prestop_seconds,
)
from podplane_sandbox.kube.store import grace_seconds
from podplane_sandbox.kube.util import iso

T0 = 1_780_000_000.0
VLLM = {"name": "engine", "image": "docker.io/vllm/vllm-openai:v0.9.0", "args": []}
SGLANG = {"name": "engine", "image": "docker.io/lmsysorg/sglang:v0.4.6.post5-cu124",
          "args": ["--enable-metrics"]}


def pod(container: dict[str, Any], hook: float | None = None, grace: int = 30,
        phase: str = "Running") -> dict[str, Any]:
    box = dict(container)
    if hook is not None:
        box["lifecycle"] = {"preStop": {"exec": {"command": ["sleep", str(int(hook))]}}}
    return {"metadata": {"name": "p", "namespace": "default", "uid": "u1",
                         "deletionTimestamp": iso(T0), "deletionGracePeriodSeconds": grace},
            "spec": {"containers": [box]},
            "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True"}]}}


def test_grace_period_from_the_delete_else_the_pod_else_30() -> None:
    spec = {"spec": {"terminationGracePeriodSeconds": 120}}
    assert grace_seconds(spec, {"gracePeriodSeconds": 5}) == 5
    assert grace_seconds(spec, {}) == 120
    assert grace_seconds({"spec": {}}, {}) == 30


@pytest.mark.parametrize(("hook", "seconds"), [
    ({"exec": {"command": ["sleep", "45"]}}, 45.0),
    ({"exec": {"command": ["/bin/sh", "-c", "sleep 12"]}}, 12.0),
    ({"sleep": {"seconds": 7}}, 7.0),
    ({"exec": {"command": ["/drain.sh"]}}, 0.0),       # unknown: granted nothing
    ({"httpGet": {"path": "/drain", "port": 8000}}, 0.0)])
def test_prestop_durations_the_sandbox_can_tell(hook: dict[str, Any], seconds: float) -> None:
    assert prestop_seconds({"lifecycle": {"preStop": hook}}) == seconds


def test_vllm_aborts_at_sigterm_after_the_hook() -> None:
    p, ends = pod(VLLM, hook=60, grace=90), Terminations()
    ends.accept(p, T0 + 50)     # finishes during the hook: answered
    ends.accept(p, T0 + 70)     # still running at SIGTERM: aborted
    ending = ending_of(p)
    assert ending is not None and (ending.sigterm_at, ending.kill_at) == (T0 + 60, T0 + 90)
    assert ends.until_gone(p, T0 + 10) == 50
    assert ends.until_gone(p, T0 + 60) is None and ends.stopped["u1"] == T0 + 60
    assert ends.answered(None, p, T0 + 50) and not ends.answered(None, p, T0 + 70)


def test_vllm_shutdown_timeout_lets_requests_finish() -> None:
    box = {**VLLM, "args": ["--shutdown-timeout", "20"]}
    p, ends = pod(box, grace=60), Terminations()
    ends.accept(p, T0 + 15)
    ends.accept(p, T0 + 25)
    assert ends.until_gone(p, T0) == 20   # the timeout cuts the second one
    assert ends.until_gone(p, T0 + 20) is None
    assert ends.answered(None, p, T0 + 15) and not ends.answered(None, p, T0 + 25)


def test_sglang_drains_on_its_watchdog_until_the_grace_period_ends() -> None:
    p, ends = pod(SGLANG, grace=30), Terminations()
    assert ends.until_gone(p, T0) == 5    # the first watchdog tick, nothing in flight
    q, busy = pod(SGLANG, grace=30), Terminations()
    busy.accept(q, T0 + 12)
    busy.accept(q, T0 + 40)               # longer than the grace period: killed at 30
    assert busy.until_gone(q, T0) == 30
    assert busy.until_gone(q, T0 + 30) is None
    assert busy.answered(None, q, T0 + 12) and not busy.answered(None, q, T0 + 40)


def test_a_hook_longer_than_the_grace_period_gets_two_seconds_then_the_kill() -> None:
    ending = ending_of(pod(SGLANG, hook=90, grace=30))
    assert ending is not None and (ending.sigterm_at, ending.kill_at) == (T0 + 30, T0 + 32)


def test_a_pod_that_never_ran_goes_at_once() -> None:
    p, ends = pod(VLLM, hook=90, grace=30, phase="Pending"), Terminations()
    assert ends.until_gone(p, T0) is None


def test_routed_during_propagation_refused_from_sigterm() -> None:
    p, ends = pod(VLLM, hook=5, grace=30), Terminations(propagation=10)
    assert ends.still_routed(p, T0 + 9) and not ends.still_routed(p, T0 + 10)
    assert not ends.refuses(p, T0 + 4) and ends.refuses(p, T0 + 5)
