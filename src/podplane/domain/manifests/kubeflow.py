"""The Kubeflow operators the HyperPod dependencies chart installs by default.

Written from the facts of aws/sagemaker-hyperpod-cli @ 011ca927, `helm_chart/HyperPodHelmChart`
(chart 0.1.0, `trainingOperators.enabled` and `mpi-operator.enabled` true in its values.yaml):

- `charts/training-operators` (appVersion v1.7.0): namespace `kubeflow`; image
  `kubeflow/training-operator:v1-855e096` running `/manager` with one `--enable-scheme` per job
  kind (pytorchjob, tfjob, mxjob, xgboostjob, paddlejob; mpijob is left to mpi-operator so the
  two do not both own `mpijobs.kubeflow.org`); health and readiness on :8081, metrics on :8080
  behind the `training-operator` Service; ServiceAccount, ClusterRole and binding
  `training-operator`; the aggregated `kubeflow-training-{admin,edit,view}` roles.
- `charts/mpi-operator` (appVersion 0.5.0): image `mpioperator/mpi-operator:0.5` in the release
  namespace (kube-system, as the chart's readme installs it) with its ServiceAccount, ClusterRole
  and binding, the aggregated `...-kubeflow-mpijobs-{admin,edit,view}` roles, and the (empty)
  `mpi-operator` namespace the chart also creates. Helm names these `<release>-mpi-operator`;
  the release is `dependencies` in the chart's readme, so that is the name used here.

CRDs: kubeflow_crds (compact structural schemas; ADR 0006).
"""

from __future__ import annotations

from typing import Any

from podplane.domain.manifests.common import (
    RBAC,
    UNHEALTHY_TOLERATION,
    Manifest,
    cluster_role,
    cluster_role_binding,
    deployment,
    env_from_field,
    meta,
    namespace,
    rule,
    sa_subject,
    service_account,
)
from podplane.domain.manifests.kubeflow_crds import GROUP as GROUP_KF
from podplane.domain.manifests.kubeflow_crds import mpijob_crd, training_crds

TRAINING_UNIT, MPI_UNIT = "kubeflow-training-operator", "mpi-operator"
TRAINING_NS, TRAINING = "kubeflow", "training-operator"
TRAINING_DEPLOYMENT = "dependencies-training-operators"  # <release>-<chart name>
TRAINING_SELECTOR = {"control-plane": "kubeflow-training-operator"}
SCHEMES = ("pytorchjob", "tfjob", "mxjob", "xgboostjob", "paddlejob")
MPI_NS, MPI = "kube-system", "dependencies-mpi-operator"
JOB_KINDS = ("mpijobs", "tfjobs", "pytorchjobs", "mxjobs", "xgboostjobs", "paddlejobs")
KF_AGGREGATE = "rbac.authorization.kubeflow.org/aggregate-to-"
NO_ISTIO = {"sidecar.istio.io/inject": "false"}
MPI_LABELS = {"app": "mpi-operator", "app.kubernetes.io/component": "mpijob",
              "kustomize.component": "mpi-operator"}
MPI_SELECTOR = {**MPI_LABELS, "app.kubernetes.io/name": "mpi-operator",
                "app.kubernetes.io/instance": "dependencies"}


def training_image(version: str) -> str:
    return f"kubeflow/training-operator:{version}"


def mpi_image(version: str) -> str:
    return f"mpioperator/mpi-operator:{version}"


def _sub(suffix: str) -> list[str]:
    return [f"{k}/{suffix}" for k in JOB_KINDS]


def _aggregated(name: str, unit: str, version: str, labels: dict[str, str],
                selects: str) -> Manifest:
    """An admin role made of every role labelled `selects` (Kubernetes RBAC aggregation)."""
    role = _labelled(cluster_role(name, unit, version, []), labels)
    role["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {selects: "true"}}]}
    return role


def _labelled(role: Manifest, labels: dict[str, str]) -> Manifest:
    role["metadata"]["labels"].update(labels)
    return role


def training_operators(version: str, region: str) -> list[Manifest]:
    unit = TRAINING_UNIT
    read = ["get", "list", "watch"]
    write = ["create", "delete", "get", "list", "patch", "update", "watch"]
    rules = [
        rule([GROUP_KF], [*JOB_KINDS, *_sub("status"), *_sub("finalizers")], write),
        rule([""], ["pods", "services", "endpoints", "events"], ["*"]),
        rule(["apps", "extensions"], ["deployments"], ["*"]),
        rule([""], ["pods/exec"], ["create"]),
        rule([RBAC], ["roles", "rolebindings"], ["create", "list", "watch", "update"]),
        rule([""], ["configmaps", "secrets", "serviceaccounts"],
             ["create", "list", "watch", "update"]),
        rule(["scheduling.volcano.sh"], ["podgroups"], ["*"]),
        rule(["autoscaling"], ["horizontalpodautoscalers"], ["*"]),
        rule(["scheduling.sigs.k8s.io"], ["podgroups"], ["*"]),
    ]
    admin = "kubeflow-training-admin"
    return [
        *training_crds(unit, version),
        namespace(TRAINING_NS, unit, version),
        service_account(TRAINING, TRAINING_NS, unit, version),
        _labelled(cluster_role(TRAINING, unit, version, rules), {"app": TRAINING}),
        _labelled(cluster_role_binding(TRAINING, unit, version, TRAINING,
                                       [sa_subject(TRAINING, TRAINING_NS)]), {"app": TRAINING}),
        _aggregated(admin, unit, version, {KF_AGGREGATE + "kubeflow-admin": "true"},
                    KF_AGGREGATE + admin),
        _labelled(cluster_role("kubeflow-training-edit", unit, version, [
            rule([GROUP_KF], list(JOB_KINDS), write), rule([GROUP_KF], _sub("status"), ["get"])]),
            {KF_AGGREGATE + "kubeflow-edit": "true", KF_AGGREGATE + admin: "true"}),
        _labelled(cluster_role("kubeflow-training-view", unit, version, [
            rule([GROUP_KF], list(JOB_KINDS), read), rule([GROUP_KF], _sub("status"), ["get"])]),
            {KF_AGGREGATE + "kubeflow-view": "true"}),
        _training_service(unit, version),
        _training_deployment(unit, version),  # last: its version annotation is the unit's
    ]



def _training_service(unit: str, version: str) -> Manifest:
    m = meta(TRAINING, unit, version, TRAINING_NS, labels={"app": TRAINING})
    m["annotations"].update({"prometheus.io/path": "/metrics", "prometheus.io/port": "8080",
                             "prometheus.io/scrape": "true"})
    return {"apiVersion": "v1", "kind": "Service", "metadata": m,
            "spec": {"type": "ClusterIP", "selector": TRAINING_SELECTOR,
                     "ports": [{"name": "monitoring-port", "port": 8080, "targetPort": 8080}]}}


def _probe(path: str, initial: int, period: int) -> dict[str, Any]:
    return {"httpGet": {"path": path, "port": 8081}, "initialDelaySeconds": initial,
            "periodSeconds": period, "timeoutSeconds": 3}


def _training_deployment(unit: str, version: str) -> Manifest:
    container = {
        "name": TRAINING, "image": training_image(version),
        "command": ["/manager", *(f"--enable-scheme={s}" for s in SCHEMES)],
        "env": [env_from_field("MY_POD_NAMESPACE", "metadata.namespace"),
                env_from_field("MY_POD_NAME", "metadata.name")],
        "ports": [{"containerPort": 8080}],
        "livenessProbe": _probe("/healthz", 15, 20), "readinessProbe": _probe("/readyz", 10, 15),
        "securityContext": {"allowPrivilegeEscalation": False}}
    pod = {"containers": [container], "serviceAccountName": TRAINING,
           "terminationGracePeriodSeconds": 10}
    return deployment(TRAINING_DEPLOYMENT, TRAINING_NS, unit, version,
                      selector=TRAINING_SELECTOR, pod=pod, pod_annotations=NO_ISTIO)


def mpi_operator(version: str, region: str) -> list[Manifest]:
    unit = MPI_UNIT
    kinds = ["mpijobs", "mpijobs/status"]
    admin = f"{MPI}-kubeflow-mpijobs-admin"
    ns = namespace("mpi-operator", unit, version)
    ns["metadata"]["labels"].update({**MPI_LABELS, "app.kubernetes.io/name": "mpi-operator"})
    return [
        mpijob_crd(unit, version),
        ns,
        _labelled(service_account(MPI, MPI_NS, unit, version), MPI_SELECTOR),
        _aggregated(admin, unit, version,
                    {**MPI_SELECTOR, KF_AGGREGATE + "kubeflow-admin": "true"},
                    KF_AGGREGATE + "kubeflow-mpijobs-admin"),
        _labelled(cluster_role(f"{MPI}-kubeflow-mpijobs-edit", unit, version, [
            rule([GROUP_KF], kinds, ["get", "list", "watch", "create", "delete",
                                     "deletecollection", "patch", "update"])]),
            {**MPI_SELECTOR, KF_AGGREGATE + "kubeflow-edit": "true",
             KF_AGGREGATE + "kubeflow-mpijobs-admin": "true"}),
        _labelled(cluster_role(f"{MPI}-kubeflow-mpijobs-view", unit, version, [
            rule([GROUP_KF], kinds, ["get", "list", "watch"])]),
            {**MPI_SELECTOR, KF_AGGREGATE + "kubeflow-view": "true"}),
        _labelled(cluster_role(MPI, unit, version, _mpi_rules()), MPI_SELECTOR),
        _labelled(cluster_role_binding(MPI, unit, version, MPI, [sa_subject(MPI, MPI_NS)]),
                  MPI_SELECTOR),
        _mpi_deployment(unit, version),  # last: its version annotation is the unit's
    ]


def _mpi_rules() -> list[dict[str, list[str]]]:
    return [
        rule([""], ["configmaps", "secrets", "services"], ["create", "list", "watch", "update"]),
        rule([""], ["pods"], ["create", "get", "list", "watch", "delete", "update", "patch"]),
        rule([""], ["pods/exec"], ["create"]),
        rule([""], ["endpoints"], ["create", "get", "update"]),
        rule([""], ["events"], ["create", "patch"]),
        rule(["batch"], ["jobs"], ["create", "list", "update", "watch"]),
        rule(["apiextensions.k8s.io"], ["customresourcedefinitions"], ["create", "get"]),
        rule([GROUP_KF], ["mpijobs", "mpijobs/finalizers", "mpijobs/status"], ["*"]),
        rule(["coordination.k8s.io"], ["leases"], ["*"]),
        rule(["scheduling.incubator.k8s.io", "scheduling.sigs.dev", "scheduling.volcano.sh"],
             ["queues", "podgroups"], ["*"]),
        rule(["scheduling.x-k8s.io"], ["podgroups"], ["*"]),
        rule(["scheduling.k8s.io"], ["priorityclasses"], ["get", "list", "watch"]),
    ]


def _mpi_deployment(unit: str, version: str) -> Manifest:
    container = {
        "name": "mpi-operator", "image": mpi_image(version), "imagePullPolicy": "IfNotPresent",
        "args": ["-alsologtostderr", "-stderrthreshold=INFO", "-v=4"],
        "env": [{"name": "KUBERNETES_CLUSTER_DOMAIN", "value": "cluster.local"}],
        "resources": {}}
    pod = {"containers": [container], "serviceAccountName": MPI,
           "tolerations": [dict(UNHEALTHY_TOLERATION)]}
    return deployment(MPI, MPI_NS, unit, version, selector=MPI_SELECTOR, pod=pod,
                      pod_annotations=NO_ISTIO)
