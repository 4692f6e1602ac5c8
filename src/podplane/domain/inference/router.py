"""The SGLang router in front of an endpoint's SGLang workers: its ServiceAccount, Role,
RoleBinding and Deployment, all named `<endpoint>-router`.

Sources (sgl-project/sglang, sgl-router): README "Service Discovery" (`--service-discovery
--selector k=v --service-discovery-namespace --service-discovery-port`; "RBAC must allow get,
list, and watch on pods"), `py_src/sglang_router/router_args.py` (the policy choices
random/round_robin/cache_aware/power_of_two, default cache_aware; `--host`, `--port`,
`--prometheus-host`, `--prometheus-port` 29000), `src/service_discovery.rs` (a pod joins once
it is Running and Ready, at `http://<podIP>:<port>`, and leaves when it is being deleted: scaling
the workers needs no change to the router). The image is the router's own build
(docker/Dockerfile.router: `python3 -m sglang_router.launch_router`), published as
`lmsysorg/sglang-router`; the tag is the one sgl-project/rbg's examples deploy
(examples/inference: `lmsysorg/sglang-router:v0.2.4`). RBAC objects: Kubernetes docs "Using RBAC
Authorization" (Role rules, RoleBinding subjects of kind ServiceAccount).

The router's pods carry `podplane.io/router-of=<endpoint>` and never the workers' selector
label, so the worker Deployment and the router's discovery see only workers.
"""

from __future__ import annotations

from typing import Any, Literal

from podplane.domain.errors import InvalidInput
from podplane.domain.inference.engines import SGLANG

Manifest = dict[str, Any]
RouterPolicy = Literal["cache_aware", "round_robin", "random", "power_of_two"]
IMAGE = "docker.io/lmsysorg/sglang-router:v0.2.4"
COMMAND = ("python3", "-m", "sglang_router.launch_router")
ROUTER_LABEL = "podplane.io/router-of"
POLICY_ANNOTATION = "podplane.io/router"
ROUTER_COMPONENT = "inference-router"
PORT = SGLANG.port          # the router answers where the workers' Service did
METRICS_PORT = 29000        # the router's Prometheus exporter (router_args.py default)
RBAC = "rbac.authorization.k8s.io"


def router_name(endpoint: str) -> str:
    return f"{endpoint}-router"


def selector(endpoint: str) -> dict[str, str]:
    """The router pods' label: the endpoint's Service selects them instead of the workers."""
    return {ROUTER_LABEL: endpoint}


def service_ports(request: dict[str, Any]) -> list[Manifest]:
    """The router's Prometheus port on the endpoint's Service (what KEDA or a scrape reads)."""
    if not request.get("router"):
        return []
    return [{"name": "metrics", "port": METRICS_PORT, "targetPort": "metrics",
             "protocol": "TCP"}]


def check(request: dict[str, Any]) -> None:
    """A router routes between SGLang workers only (it reads SGLang's own endpoints), and
    podplane runs it for self-managed endpoints (the inference operator routes its own)."""
    if request.get("router") and request.get("kind") == "managed":
        raise InvalidInput("A managed endpoint routes with the inference operator's "
                           "intelligent routing, not an SGLang router.", field="router",
                           hint="Leave router unset, or use kind=self_managed.")
    if request.get("router") and request.get("engine") != "sglang":
        raise InvalidInput("The SGLang router fronts SGLang workers only.", field="router",
                           hint="Use engine=sglang, or leave router unset.")


def objects(request: dict[str, Any], labels: dict[str, str], namespace: str,
            workers: dict[str, str]) -> list[Manifest]:
    """ServiceAccount, Role (pods: get/list/watch), RoleBinding and the router Deployment.
    `labels` are podplane's labels of the endpoint's objects; `workers` the worker pods'
    selector, which the router watches."""
    name = router_name(request["name"])
    mine = {**labels, "app.kubernetes.io/component": ROUTER_COMPONENT}
    meta = {"name": name, "namespace": namespace, "labels": mine}
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": dict(meta)}
    role = {"apiVersion": f"{RBAC}/v1", "kind": "Role", "metadata": dict(meta),
            "rules": [{"apiGroups": [""], "resources": ["pods"],
                       "verbs": ["get", "list", "watch"]}]}
    binding = {"apiVersion": f"{RBAC}/v1", "kind": "RoleBinding", "metadata": dict(meta),
               "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": name},
               "subjects": [{"kind": "ServiceAccount", "name": name,
                             "namespace": namespace}]}
    return [account, role, binding, deployment(request, mine, namespace, workers)]


def arguments(request: dict[str, Any], namespace: str, workers: dict[str, str]) -> list[str]:
    return ["--host", "0.0.0.0", "--port", str(PORT), "--policy", str(request["router"]),
            "--service-discovery", "--selector",
            *(f"{k}={v}" for k, v in sorted(workers.items())),
            "--service-discovery-namespace", namespace,
            "--service-discovery-port", str(SGLANG.port),
            "--prometheus-host", "0.0.0.0", "--prometheus-port", str(METRICS_PORT)]


def deployment(request: dict[str, Any], labels: dict[str, str], namespace: str,
               workers: dict[str, str]) -> Manifest:
    endpoint = request["name"]
    pod_labels = {k: v for k, v in labels.items() if k not in workers}
    pod_labels.update(selector(endpoint))
    container = {
        "name": "router", "image": IMAGE, "command": list(COMMAND),
        "args": arguments(request, namespace, workers),
        "ports": [{"name": "http", "containerPort": PORT, "protocol": "TCP"},
                  {"name": "metrics", "containerPort": METRICS_PORT, "protocol": "TCP"}],
        # Ready once the router answers; its /readiness needs a healthy worker (README,
        # "Public health endpoints"), /liveness only the process.
        "readinessProbe": {"httpGet": {"path": "/liveness", "port": "http"},
                           "periodSeconds": 10, "failureThreshold": 3},
        "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": router_name(endpoint), "namespace": namespace,
                         "labels": labels, "annotations": {POLICY_ANNOTATION: request["router"]}},
            "spec": {"replicas": 1, "selector": {"matchLabels": selector(endpoint)},
                     "template": {"metadata": {"labels": pod_labels},
                                  "spec": {"serviceAccountName": router_name(endpoint),
                                           "containers": [container]}}}}


def taken_names(endpoint: str) -> list[tuple[str, str, str]]:
    """(apiVersion, kind, name) of every object the router adds: a create refuses any of them
    that exists already."""
    name = router_name(endpoint)
    return [("apps/v1", "Deployment", name), ("v1", "ServiceAccount", name),
            (f"{RBAC}/v1", "Role", name), (f"{RBAC}/v1", "RoleBinding", name)]
