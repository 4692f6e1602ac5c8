"""What makes removing a serving engine pod safe (an autoscaler's scale-in, a rollout, a
delete): no request that reached the pod is lost.

Why it is needed (Kubernetes docs, "Pod Lifecycle", Termination of Pods; "EndpointSlices",
Conditions): deleting a pod starts the kubelet's shutdown and the pod's removal from the
Service's endpoints at the same time. kube-proxy, the API server's proxy and a cloud load
balancer learn of the removal later (seconds in-cluster; AWS load balancer targets can take
minutes to stop receiving traffic: EKS Best Practices, "Load Balancing", and
kubernetes-sigs/aws-load-balancer-controller#3270), so new requests still arrive for a while.
SIGTERM then ends the engine differently per engine:
- vLLM (the pinned v0.9.0, `vllm/entrypoints/launcher.py`): new connections are refused and
  every request in flight is aborted at once (vllm-project/vllm#34730; newer releases add
  `--shutdown-timeout`, default 0, which the pinned image does not know).
- SGLang (`tokenizer_manager.py`, `sigterm_watchdog`): drains the requests in flight, checking
  every 5 s, then exits.

So the container gets a preStop hook that sleeps before SIGTERM (the kubelet runs it first,
and the pod keeps serving meanwhile): long enough for the endpoint removal to reach every data
path, plus the longest generation expected to be in flight when it started. The image's own
`sleep` is used (an `exec` hook works on every Kubernetes version; the `sleep` action needs
1.30+). `terminationGracePeriodSeconds` covers the hook and the engine's own drain after
SIGTERM (SGLang's watchdog, vLLM's exit); if it ran out first the kubelet would kill
whatever is left.
"""

from __future__ import annotations

from typing import Any

PROPAGATION_SECONDS = 15     # endpoint removal reaching kube-proxy / the proxy / the LB
LONGEST_REQUEST_SECONDS = 75  # a generation in flight when the removal was published
PRESTOP_SECONDS = PROPAGATION_SECONDS + LONGEST_REQUEST_SECONDS
ENGINE_EXIT_SECONDS = 30     # SIGTERM -> exit: SGLang's 5 s watchdog ticks, process teardown
GRACE_SECONDS = PRESTOP_SECONDS + ENGINE_EXIT_SECONDS


def prestop_hook() -> dict[str, Any]:
    """The engine container's `lifecycle`: sleep before SIGTERM."""
    return {"preStop": {"exec": {"command": ["sleep", str(PRESTOP_SECONDS)]}}}
