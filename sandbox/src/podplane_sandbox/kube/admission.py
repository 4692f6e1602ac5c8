"""Defaults the real API server fills in on create (the ones clients and kubectl rely on)."""

from __future__ import annotations

import base64
from typing import Any

from podplane_sandbox.kube.errors import KubeError
from podplane_sandbox.kube.resources import ResourceType
from podplane_sandbox.kube.store import Store

Obj = dict[str, Any]


def install(store: Store) -> None:
    store.admit.setdefault("pods", []).append(_pod)
    store.admit.setdefault("pods", []).append(_quantities)
    store.admit.setdefault("pods", []).append(_service_account_factory(store))
    store.admit.setdefault("services", []).append(_service_factory(store))
    store.admit.setdefault("namespaces", []).append(_namespace)
    store.admit.setdefault("batch/jobs", []).append(_job)
    store.admit.setdefault("apps/deployments", []).append(_deployment)
    store.admit.setdefault("secrets", []).append(_secret)


def _secret(rt: ResourceType, obj: Obj, old: Obj | None) -> None:
    """`stringData` is write-only: merged into `data` (base64) on every write, overwriting
    those keys, and never read back (Kubernetes API reference, Secret v1, stringData)."""
    plain = obj.pop("stringData", None) or {}
    if plain:
        data = obj.setdefault("data", {})
        data.update({k: base64.b64encode(str(v).encode()).decode() for k, v in plain.items()})


def _pod(rt: ResourceType, obj: Obj, old: Obj | None) -> None:
    if old is not None:
        return
    spec = obj.setdefault("spec", {})
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("serviceAccountName", "default")
    spec.setdefault("securityContext", {})
    for c in spec.get("containers") or []:
        c.setdefault(
            "imagePullPolicy",
            "Always"
            if c.get("image", "").endswith(":latest") or ":" not in c.get("image", "")
            else "IfNotPresent",
        )
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        c.setdefault("resources", {})
    obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}


def _quantities(rt: ResourceType, obj: Obj, old: Obj | None) -> None:
    """Resource requests and limits are `resource.Quantity` values: the API server accepts a
    JSON number and always answers the canonical string (k8s.io/apimachinery
    pkg/api/resource/quantity.go, MarshalJSON), which typed clients require (the Python
    client's V1ResourceRequirements refuses a number)."""
    spec = obj.get("spec") or {}
    for c in list(spec.get("containers") or []) + list(spec.get("initContainers") or []):
        for part in ("requests", "limits"):
            values = (c.get("resources") or {}).get(part) or {}
            for name, value in values.items():
                if isinstance(value, int | float) and not isinstance(value, bool):
                    values[name] = canonical_quantity(value)


def canonical_quantity(value: float) -> str:
    """A number as Quantity prints it: whole numbers plainly, fractions in milli-units."""
    if float(value).is_integer():
        return str(int(value))
    return f"{round(value * 1000)}m"


def _service_account_factory(store: Store) -> Any:
    """The ServiceAccount admission plugin: a pod naming a ServiceAccount that does not exist is
    refused on create (Kubernetes docs "Service Accounts": admission "rejects the Pod if the
    ServiceAccount does not exist"). `default` is made in every namespace by the ServiceAccount
    controller within moments, so it is taken as present."""

    def admit(rt: ResourceType, obj: Obj, old: Obj | None) -> None:
        if old is not None:
            return
        spec = obj.get("spec") or {}
        name = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
        ns = obj["metadata"].get("namespace", "default")
        if name != "default" and store.find("serviceaccounts", ns, name) is None:
            pod = obj["metadata"].get("name", "")
            raise KubeError(403, f'pods "{pod}" is forbidden: error looking up service account '
                            f'{ns}/{name}: serviceaccount "{name}" not found', "Forbidden")

    return admit


def _service_factory(store: Store) -> Any:
    def admit(rt: ResourceType, obj: Obj, old: Obj | None) -> None:
        spec = obj.setdefault("spec", {})
        if old is not None:
            for key in ("clusterIP", "clusterIPs"):
                if key in old.get("spec", {}):
                    spec[key] = old["spec"][key]
            return
        spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        if spec.get("clusterIP") != "None":
            n = len(store.items("services")) + 10
            spec["clusterIP"] = f"10.100.{n // 250}.{n % 250 + 1}"
            spec["clusterIPs"] = [spec["clusterIP"]]
        for i, port in enumerate(spec.get("ports") or []):
            port.setdefault("protocol", "TCP")
            port.setdefault("targetPort", port.get("port"))
            if spec["type"] in ("NodePort", "LoadBalancer"):
                port.setdefault("nodePort", 30000 + (n * 7 + i) % 2768)
        obj.setdefault("status", {"loadBalancer": {}})

    return admit


def _namespace(rt: ResourceType, obj: Obj, old: Obj | None) -> None:
    obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
    labels = obj["metadata"].setdefault("labels", {})
    labels["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
    if old is None:
        obj["status"] = {"phase": "Active"}


def _job(rt: ResourceType, obj: Obj, old: Obj | None) -> None:
    spec = obj.setdefault("spec", {})
    if old is not None:
        return
    uid, name = obj["metadata"]["uid"], obj["metadata"]["name"]
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("parallelism", 1)
    spec.setdefault("completions", 1)
    spec.setdefault("suspend", False)
    spec.setdefault("selector", {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
    labels = spec.setdefault("template", {}).setdefault("metadata", {}).setdefault("labels", {})
    labels.update(
        {
            "batch.kubernetes.io/controller-uid": uid,
            "controller-uid": uid,
            "batch.kubernetes.io/job-name": name,
            "job-name": name,
        }
    )
    spec["template"].setdefault("spec", {}).setdefault("restartPolicy", "Never")


def _deployment(rt: ResourceType, obj: Obj, old: Obj | None) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    spec.setdefault(
        "strategy",
        {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
    )
