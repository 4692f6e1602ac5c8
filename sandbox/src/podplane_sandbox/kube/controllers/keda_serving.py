"""How an HPA's external metric reaches KEDA in a real cluster, and what breaks the way.

The HPA controller reads `external.metrics.k8s.io/v1beta1` from the API server, which serves
that group only through an APIService: the kube-aggregator proxies it to the Service the
APIService names and marks it Available only when that Service exists, has the port and has
ready endpoints (kubernetes/kube-aggregator pkg/controllers/status/available_controller.go:
reasons ServiceNotFound, ServicePortError, MissingEndpoints; Passed when it answers).
KEDA's own manifests (kedacore/keda v2.20.2, read not copied):
- config/metrics-server/api_service.yaml: APIService `v1beta1.external.metrics.k8s.io`,
  `spec.service` = the metrics apiserver's Service (config/metrics-server/service.yaml:
  port 443 -> 6443), image `keda-metrics-apiserver`;
- config/metrics-server/role_binding.yaml: that adapter's ServiceAccount bound to the
  ClusterRole `system:auth-delegator` (TokenReview and SubjectAccessReview for the requests
  the aggregator forwards) and, in kube-system, to the Role
  `extension-apiserver-authentication-reader` (the request-header CA it trusts). Without
  them the adapter cannot authenticate the aggregator (k8s.io/apiserver
  pkg/server/options/authentication.go: "Unable to get
  configmap/extension-apiserver-authentication in kube-system"), and answers 401/403;
- cmd/adapter/main.go: the adapter asks the operator over gRPC at
  `--metrics-service-address`, default `keda-operator.<its namespace>.svc.cluster.local:9666`
  (generateDefaultMetricsServiceAddr); config/manager/service.yaml: the operator's Service
  `keda-operator`, port `metricsservice` 9666 (and 8080 for its own metrics).
Any break and the HPA's request fails: condition ScalingActive False, reason
FailedGetExternalMetric (kubernetes pkg/controller/podautoscaler/horizontal.go).

Both bootstrap roles are made by the API server at start (kubernetes
plugin/pkg/auth/authorizer/rbac/bootstrappolicy) and are not objects in the sandbox's store:
a binding that names them counts, as would a role of the store that grants the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from podplane_sandbox.kube import authz
from podplane_sandbox.kube.controllers.framework import Controller, Key
from podplane_sandbox.kube.service_proxy import ready_endpoints
from podplane_sandbox.kube.store import Event, Store
from podplane_sandbox.kube.util import clone

Obj = dict[str, Any]
APISERVICES = "apiregistration.k8s.io/apiservices"
EXTERNAL = "v1beta1.external.metrics.k8s.io"
ADAPTER_IMAGE = "keda-metrics-apiserver"
OPERATOR_PORT = 9666
DELEGATOR = "system:auth-delegator"
AUTH_READER = ("kube-system", "extension-apiserver-authentication-reader")
RECHECK_SECONDS = 30.0


@dataclass(frozen=True)
class Availability:
    ok: bool
    reason: str
    message: str


def _service_ref(apiservice: Obj) -> tuple[str, str, int] | None:
    ref = (apiservice.get("spec") or {}).get("service")
    if not ref:
        return None   # a local APIService: the API server itself serves the group
    return str(ref.get("namespace", "")), str(ref.get("name", "")), int(ref.get("port") or 443)


def available(store: Store, apiservice: Obj) -> Availability:
    """The kube-aggregator's Available condition for one APIService."""
    ref = _service_ref(apiservice)
    if ref is None:
        return Availability(True, "Local", "Local APIServices are always available")
    ns, name, port = ref
    svc = store.find("services", ns, name)
    if svc is None:
        return Availability(False, "ServiceNotFound",
                            f'service/{name} in "{ns}" is not present')
    if not any(int(p.get("port", 0)) == port for p in svc["spec"].get("ports") or []):
        return Availability(False, "ServicePortError",
                            f'service/{name} in "{ns}" is not listening on port {port}')
    if not ready_endpoints(store, ns, svc):
        return Availability(False, "MissingEndpoints",
                            f'endpoints for service/{name} in "{ns}" have no addresses')
    return Availability(True, "Passed", "all checks passed")


def broken(store: Store) -> str | None:
    """Why the HPA cannot read an external metric from KEDA now (None: it can)."""
    apiservice = store.find(APISERVICES, "", EXTERNAL) \
        if store.registry.by_key(APISERVICES) else None
    if apiservice is None:
        return "the server could not find the requested resource (external.metrics.k8s.io)"
    state = available(store, apiservice)
    ref = _service_ref(apiservice)
    if not state.ok or ref is None:
        return f"apiservice {EXTERNAL} is not available: {state.reason}: {state.message}"
    adapters = [p for p in ready_endpoints(store, ref[0], store.find("services", *ref[:2]) or {})
                if _adapter(p) is not None]
    if not adapters:
        return f"service {ref[0]}/{ref[1]} does not lead to KEDA's metrics apiserver"
    return _adapter_problem(store, adapters[0])


def _adapter(pod: Obj) -> Obj | None:
    return next((c for c in (pod.get("spec") or {}).get("containers") or []
                 if ADAPTER_IMAGE in str(c.get("image", ""))), None)


def _account(pod: Obj) -> tuple[str, str]:
    return (str(pod["metadata"].get("namespace", "")),
            str((pod.get("spec") or {}).get("serviceAccountName") or "default"))


def _adapter_problem(store: Store, pod: Obj) -> str | None:
    account = _account(pod)
    if not _delegates(store, account):
        return (f"Unauthorized: serviceaccount {account[0]}/{account[1]} of the metrics "
                f"apiserver is not bound to {DELEGATOR}")
    if not _reads_auth_config(store, account):
        return ("Unauthorized: Unable to get configmap/extension-apiserver-authentication in "
                f"kube-system (no rolebinding to {AUTH_READER[1]} for {account[0]}/"
                f"{account[1]})")
    host, port = operator_address(pod)
    return _operator_problem(store, host, port)


def _delegates(store: Store, account: tuple[str, str]) -> bool:
    if any(authz.names_account(b, account) and b["roleRef"].get("name") == DELEGATOR
           for b in store.items("rbac.authorization.k8s.io/clusterrolebindings")):
        return True
    return all(authz.service_account_allowed(store, account, authz.Request(
        "create", group, resource, "", False)) for group, resource in (
            ("authentication.k8s.io", "tokenreviews"),
            ("authorization.k8s.io", "subjectaccessreviews")))


def _reads_auth_config(store: Store, account: tuple[str, str]) -> bool:
    ns, role = AUTH_READER
    if any(authz.names_account(b, account) and b["roleRef"].get("name") == role
           for b in store.items("rbac.authorization.k8s.io/rolebindings", ns)):
        return True
    return authz.service_account_allowed(store, account, authz.Request(
        "get", "", "configmaps", ns, True))


def operator_address(pod: Obj) -> tuple[str, int]:
    """The adapter's `--metrics-service-address` (host, port), or KEDA's default."""
    args = [str(a) for a in (_adapter(pod) or {}).get("args") or []]
    flag = "--metrics-service-address="
    given = next((a[len(flag):] for a in args if a.startswith(flag)), None)
    if given is None:
        return f"keda-operator.{pod['metadata'].get('namespace', '')}.svc.cluster.local", \
            OPERATOR_PORT
    host, _, port = given.rpartition(":")
    return host, int(port or OPERATOR_PORT)


def _operator_problem(store: Store, host: str, port: int) -> str | None:
    parts = host.split(".")
    svc = store.find("services", parts[1], parts[0]) if len(parts) > 1 else None
    where = f"{host}:{port}"
    if svc is None:
        return f'rpc error: code = Unavailable desc = dial tcp: lookup {host}: no such host'
    if not any(int(p.get("port", 0)) == port for p in svc["spec"].get("ports") or []):
        return f"rpc error: code = Unavailable desc = dial tcp {where}: i/o timeout"
    if not ready_endpoints(store, parts[1], svc):
        return f"rpc error: code = Unavailable desc = dial tcp {where}: connection refused"
    return None


class ApiServiceAvailability(Controller):
    """The kube-aggregator's status for every APIService that names a Service."""

    primary = APISERVICES

    def keys_for(self, event: Event) -> Iterable[Key]:
        if event.rt_key == self.primary:
            yield from super().keys_for(event)
        elif event.rt_key in ("services", "pods"):
            yield from self.initial_keys()

    def reconcile(self, key: Key) -> float | None:
        found = self.primary_obj(key)
        if found is None:
            return None
        state = available(self.ctx.store, found)
        before: Obj = next((c for c in (found.get("status") or {}).get("conditions") or []
                       if c.get("type") == "Available"), {})
        status = clone(found.get("status") or {})
        status["conditions"] = [{
            "type": "Available", "status": "True" if state.ok else "False",
            "reason": state.reason, "message": state.message,
            "lastTransitionTime": before.get("lastTransitionTime")
            if before.get("status") == ("True" if state.ok else "False")
            else self.ctx.now_iso()}]
        self.ctx.update_status(APISERVICES, found, status)
        return None
