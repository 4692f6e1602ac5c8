"""The KubeRay and KEDA operators as podplane renders them (pure; no Helm at run time).

KubeRay: ray-project/kuberay `helm-chart/kuberay-operator` (templates/deployment.yaml,
templates/_helpers.tpl's ClusterRole rules, values.yaml: image quay.io/kuberay/operator, port
8080, 100m/512Mi). KEDA: kedacore/keda `config/manager/manager.yaml` and `config/rbac/`,
`config/metrics-server/` (images ghcr.io/kedacore/keda and keda-metrics-apiserver). Versions are
pinned by the feature catalogue; CRDs come from feature_crds.
"""

from __future__ import annotations

from podplane.domain.manifests.common import (
    Manifest,
    cluster_role,
    cluster_role_binding,
    deployment,
    env_from_field,
    namespace,
    rule,
    sa_subject,
    service_account,
)
from podplane.domain.manifests.feature_crds import KEDA_CRDS, KUBERAY_CRDS, compact_crd

KUBERAY_NS, KEDA_NS = "ray-system", "keda"
ALL = ["*"]
READ = ["get", "list", "watch"]
WRITE = ["create", "delete", "get", "list", "patch", "update", "watch"]


def _resources(cpu: str, memory: str) -> dict[str, dict[str, str]]:
    return {"limits": {"cpu": cpu, "memory": memory},
            "requests": {"cpu": cpu, "memory": memory}}


def kuberay(unit: str, version: str) -> list[Manifest]:
    name = "kuberay-operator"
    rules = [rule(["ray.io"], ["rayclusters", "rayjobs", "rayservices", "raycronjobs"], WRITE),
             rule(["ray.io"], [f"{r}/status" for r in ("rayclusters", "rayjobs", "rayservices",
                                                      "raycronjobs")], ["get", "patch",
                                                                         "update"]),
             rule([""], ["pods", "services", "serviceaccounts", "endpoints"], WRITE),
             rule([""], ["events"], ["create", "patch"]),
             rule(["batch"], ["jobs"], WRITE),
             rule(["networking.k8s.io"], ["ingresses"], WRITE),
             rule(["rbac.authorization.k8s.io"], ["roles", "rolebindings"], WRITE),
             rule(["coordination.k8s.io"], ["leases"], WRITE)]
    pod = {"serviceAccountName": name, "containers": [{
        "name": name, "image": f"quay.io/kuberay/operator:{version}", "command": ["/manager"],
        "args": ["--enable-leader-election=true"],
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
        "resources": _resources("100m", "512Mi")}]}
    return [*(compact_crd(c, unit, version) for c in KUBERAY_CRDS),
            namespace(KUBERAY_NS, unit, version),
            service_account(name, KUBERAY_NS, unit, version),
            cluster_role(name, unit, version, rules),
            cluster_role_binding(name, unit, version, name, [sa_subject(name, KUBERAY_NS)]),
            deployment(name, KUBERAY_NS, unit, version,
                       selector={"app.kubernetes.io/name": name}, pod=pod)]


def keda(unit: str, version: str) -> list[Manifest]:
    op, metrics = "keda-operator", "keda-operator-metrics-apiserver"
    rules = [rule(["keda.sh"], ALL, WRITE),
             rule([""], ["configmaps", "secrets", "pods", "services", "limitranges",
                         "serviceaccounts"], READ),
             rule([""], ["events"], ["create", "patch"]),
             rule(["apps"], ["deployments", "statefulsets"], READ),
             rule(["*"], ["*/scale"], ["get", "list", "patch", "update", "watch"]),
             rule(["autoscaling"], ["horizontalpodautoscalers"], WRITE),
             rule(["batch"], ["jobs"], WRITE),
             rule(["coordination.k8s.io"], ["leases"], WRITE),
             rule(["external.metrics.k8s.io"], ALL, READ)]
    env = [env_from_field("POD_NAME", "metadata.name"),
           env_from_field("POD_NAMESPACE", "metadata.namespace"),
           {"name": "WATCH_NAMESPACE", "value": ""}, {"name": "OPERATOR_NAME", "value": op}]
    operator_pod = {"serviceAccountName": op, "containers": [{
        "name": op, "image": f"ghcr.io/kedacore/keda:{version}", "command": ["/keda"],
        "args": ["--leader-elect", "--zap-log-level=info"], "env": env,
        "resources": _resources("1", "1000Mi")}]}
    metrics_pod = {"serviceAccountName": op, "containers": [{
        "name": metrics, "image": f"ghcr.io/kedacore/keda-metrics-apiserver:{version}",
        "args": ["--port=8080", "--secure-port=6443"], "env": env[:2],
        "ports": [{"name": "https", "containerPort": 6443}],
        "resources": _resources("1", "1000Mi")}]}
    return [*(compact_crd(c, unit, version) for c in KEDA_CRDS),
            namespace(KEDA_NS, unit, version),
            service_account(op, KEDA_NS, unit, version),
            cluster_role(op, unit, version, rules),
            cluster_role_binding(op, unit, version, op, [sa_subject(op, KEDA_NS)]),
            deployment(metrics, KEDA_NS, unit, version,
                       selector={"app": metrics}, pod=metrics_pod),
            deployment(op, KEDA_NS, unit, version, selector={"app": op}, pod=operator_pod)]
