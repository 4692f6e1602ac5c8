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
    api_service,
    cluster_role,
    cluster_role_binding,
    deployment,
    env_from_field,
    namespace,
    role,
    role_binding,
    rule,
    sa_subject,
    service,
    service_account,
)
from podplane.domain.manifests.feature_crds import KEDA_CRDS, KUBERAY_CRDS, compact_crd

KUBERAY_NS, KEDA_NS = "ray-system", "keda"
CERT_SECRET = "kedaorg-certs"
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


def _keda_rules() -> list[dict[str, list[str]]]:
    """kedacore/keda config/rbac/role.yaml (ClusterRole keda-operator), including the
    `discovery.k8s.io` EndpointSlice list the metrics-api scaler makes with
    `aggregateFromKubeServiceEndpoints` (pkg/scalers/metrics_api_scaler.go
    getEndpointsUrlsFromServiceURL)."""
    scale = ["get", "list", "patch", "update", "watch"]
    return [rule([""], ["configmaps", "configmaps/status", "external", "pods", "secrets",
                        "services"], READ),
            rule([""], ["limitranges", "serviceaccounts"], ["list", "watch"]),
            rule(["", "events.k8s.io"], ["events"], ["create", "patch"]),
            rule(["*"], ["*"], ["get"]),
            rule(["*"], ["*/scale"], scale),
            rule(["admissionregistration.k8s.io"], ["validatingwebhookconfigurations"], scale),
            rule(["apiregistration.k8s.io"], ["apiservices"], scale),
            rule(["apps"], ["deployments", "replicasets", "statefulsets"], ["list", "watch"]),
            rule(["autoscaling"], ["horizontalpodautoscalers"], WRITE),
            rule(["batch"], ["jobs"], WRITE),
            rule(["discovery.k8s.io"], ["endpointslices"], READ),
            rule(["eventing.keda.sh"], ["cloudeventsources", "cloudeventsources/status",
                                        "clustercloudeventsources",
                                        "clustercloudeventsources/status"], scale),
            rule(["keda.sh"], ALL, WRITE)]


def _keda_rbac(unit: str, version: str, op: str) -> list[Manifest]:
    """config/rbac (role.yaml, role_binding.yaml: the ClusterRole and, in the keda namespace,
    the Role for its certificate Secret and leader-election Lease) and
    config/metrics-server (role.yaml, role_binding.yaml: the external-metrics reader for the
    HPA controller, the adapter's `system:auth-delegator` and
    `extension-apiserver-authentication-reader` bindings, without which it cannot
    authenticate the API server's aggregated requests)."""
    me = [sa_subject(op, KEDA_NS)]
    reader = "keda-external-metrics-reader"
    return [cluster_role(op, unit, version, _keda_rules()),
            cluster_role_binding(op, unit, version, op, me),
            role(op, KEDA_NS, unit, version, [rule([""], ["secrets"], WRITE),
                                              rule(["coordination.k8s.io"], ["leases"], WRITE)]),
            role_binding(op, KEDA_NS, unit, version, ("Role", op), me),
            cluster_role(reader, unit, version, [rule(["external.metrics.k8s.io"], ALL, ALL)]),
            cluster_role_binding("keda-hpa-controller-external-metrics", unit, version, reader,
                                 [sa_subject("horizontal-pod-autoscaler", "kube-system")]),
            cluster_role_binding("keda-system-auth-delegator", unit, version,
                                 "system:auth-delegator", me),
            role_binding("keda-auth-reader", "kube-system", unit, version,
                         ("Role", "extension-apiserver-authentication-reader"), me)]


def _keda_services(unit: str, version: str, op: str, metrics: str) -> list[Manifest]:
    """config/manager/service.yaml (the operator's gRPC metrics service, 9666, which the
    adapter dials: cmd/adapter/main.go generateDefaultMetricsServiceAddr),
    config/metrics-server/service.yaml (443 -> 6443) and api_service.yaml: the HPA reads
    external metrics only through this APIService."""
    return [service(op, KEDA_NS, unit, version, {"app": op},
                    [("metricsservice", 9666, 9666), ("metrics", 8080, 8080)]),
            service(metrics, KEDA_NS, unit, version, {"app": metrics},
                    [("https", 443, 6443), ("metrics", 8080, 8080)]),
            api_service("v1beta1.external.metrics.k8s.io", unit, version, (KEDA_NS, metrics))]


def _certificates(optional: bool) -> tuple[dict[str, object], dict[str, object]]:
    """(volume, mount) of the Secret the operator's certificate rotation writes
    (cmd/operator/main.go `--cert-secret-name` kedaorg-certs, `--cert-dir` /certs; both
    Deployments of config/ mount it, the operator's optionally: it makes it)."""
    secret: dict[str, object] = {"secretName": CERT_SECRET, "defaultMode": 0o644}
    if optional:
        secret["optional"] = True
    return ({"name": "certificates", "secret": secret},
            {"name": "certificates", "mountPath": "/certs", "readOnly": True})


def keda(unit: str, version: str) -> list[Manifest]:
    op, metrics = "keda-operator", "keda-operator-metrics-apiserver"
    env = [env_from_field("POD_NAME", "metadata.name"),
           env_from_field("POD_NAMESPACE", "metadata.namespace"),
           {"name": "WATCH_NAMESPACE", "value": ""}, {"name": "OPERATOR_NAME", "value": op}]
    # the certificate names the Services by these flags (certificate_manager.go getDNSNames);
    # the metrics Service keeps the name earlier podplane versions gave its Deployment
    op_volume, op_mount = _certificates(optional=True)
    operator_pod = {"serviceAccountName": op, "volumes": [op_volume], "containers": [{
        "name": op, "image": f"ghcr.io/kedacore/keda:{version}", "command": ["/keda"],
        "args": ["--leader-elect", "--zap-log-level=info", "--enable-cert-rotation=true",
                 f"--operator-service-name={op}", f"--metrics-server-service-name={metrics}"],
        "env": env, "volumeMounts": [op_mount], "resources": _resources("1", "1000Mi")}]}
    volume, mount = _certificates(optional=False)
    metrics_pod = {"serviceAccountName": op,
                   "volumes": [volume, {"name": "temp-vol", "emptyDir": {}}],
                   "containers": [{
                       "name": metrics,
                       "image": f"ghcr.io/kedacore/keda-metrics-apiserver:{version}",
                       "args": ["--port=8080", "--secure-port=6443",
                                "--client-ca-file=/certs/ca.crt",
                                "--tls-cert-file=/certs/tls.crt",
                                "--tls-private-key-file=/certs/tls.key", "--cert-dir=/certs"],
                       "env": env[:2], "ports": [{"name": "https", "containerPort": 6443}],
                       "volumeMounts": [mount, {"name": "temp-vol", "mountPath": "/tmp"}],
                       "resources": _resources("1", "1000Mi")}]}
    return [*(compact_crd(c, unit, version) for c in KEDA_CRDS),
            namespace(KEDA_NS, unit, version),
            service_account(op, KEDA_NS, unit, version),
            *_keda_rbac(unit, version, op),
            deployment(metrics, KEDA_NS, unit, version,
                       selector={"app": metrics}, pod=metrics_pod),
            deployment(op, KEDA_NS, unit, version, selector={"app": op}, pod=operator_pod),
            *_keda_services(unit, version, op, metrics)]
