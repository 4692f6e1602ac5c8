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

TLS on both hops (kedacore/keda cmd/operator/main.go, pkg/certificates/certificate_manager.go,
pkg/metricsservice/server.go, v2.20.2): with `--enable-cert-rotation=true` the operator makes
the Secret `--cert-secret-name` (default kedaorg-certs) in its namespace (its Role must allow
it: config/rbac/role.yaml), writes the certificate to its `--cert-dir`, and patches the CA into
the APIService `v1beta1.external.metrics.k8s.io` (`--enable-apiservice-patching`, default
true; its ClusterRole's `apiservices` patch). The certificate names the services
`--operator-service-name` (keda-operator) and `--metrics-server-service-name`
(keda-metrics-apiserver) as `<svc>`, `<svc>.<ns>`, `<svc>.<ns>.svc`, `<svc>.<ns>.svc.<domain>`
(getDNSNames). Without rotation the certificates must be mounted at `--cert-dir`. The gRPC
server starts only with them; the adapter mounts the same Secret (config/metrics-server/
deployment.yaml). The aggregator verifies the adapter's certificate with `spec.caBundle`
unless `insecureSkipTLSVerify` (Kubernetes API reference, APIServiceSpec), so a missing CA is
FailedDiscoveryCheck "x509: certificate signed by unknown authority", and a name the
certificate does not hold is "x509: certificate is valid for ..., not ...". The certificate
bytes are stand-ins: the sandbox checks who holds them and which names they cover.

Both bootstrap roles are made by the API server at start (kubernetes
plugin/pkg/auth/authorizer/rbac/bootstrappolicy) and are not objects in the sandbox's store:
a binding that names them counts, as would a role of the store that grants the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from podplane_sandbox.kube import authz
from podplane_sandbox.kube.controllers.framework import Controller, Ctx, Key
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
OPERATOR = ("keda", "keda-operator")   # as keda.py
STAND_IN = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCnNhbmRib3gKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="


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
    spec = apiservice.get("spec") or {}
    if not spec.get("caBundle") and not spec.get("insecureSkipTLSVerify"):
        return Availability(False, "FailedDiscoveryCheck",
                            f"failing or missing response from https://{name}.{ns}.svc:{port}"
                            ": x509: certificate signed by unknown authority")
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
    host = f"{ref[1]}.{ref[0]}.svc"
    if not (apiservice.get("spec") or {}).get("insecureSkipTLSVerify") and \
            host not in certificate_names(store):
        return (f"x509: certificate is valid for {', '.join(sorted(certificate_names(store)))}"
                f", not {host}")
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
    if not ready_endpoints(store, parts[1], svc) or not certificates_in_place(store):
        return f"rpc error: code = Unavailable desc = dial tcp {where}: connection refused"
    if host not in certificate_names(store):
        return ("rpc error: code = Unavailable desc = connection error: transport: "
                f"authentication handshake failed: x509: certificate is not valid for {host}")
    return None


def operator_flags(store: Store) -> dict[str, str]:
    """The KEDA operator container's `--name=value` flags (a bare `--name` is "true")."""
    dep = store.find("apps/deployments", *OPERATOR) or {}
    pod = ((dep.get("spec") or {}).get("template") or {}).get("spec") or {}
    args = [str(a) for c in pod.get("containers") or [] for a in c.get("args") or []]
    return {k: (v if sep else "true") for k, sep, v in
            (a.removeprefix("--").partition("=") for a in args if a.startswith("--"))}


def _on(flags: dict[str, str], name: str, default: bool) -> bool:
    return flags.get(name, str(default).lower()).lower() == "true"


def secret_name(store: Store) -> str:
    return operator_flags(store).get("cert-secret-name", "kedaorg-certs")


def certificate_names(store: Store) -> set[str]:
    """The DNS names of the certificate KEDA's operator issues (getDNSNames)."""
    flags, ns = operator_flags(store), OPERATOR[0]
    domain = flags.get("k8s-cluster-domain", "cluster.local")
    services = [flags.get("operator-service-name", "keda-operator"),
                flags.get("metrics-server-service-name", "keda-metrics-apiserver")]
    return {n for svc in services
            for n in (svc, f"{svc}.{ns}", f"{svc}.{ns}.svc", f"{svc}.{ns}.svc.{domain}")}


def certificates_in_place(store: Store) -> bool:
    """The operator has its certificates: its Secret exists and either rotation writes it to
    the cert dir or the operator mounts it there."""
    if store.find("secrets", OPERATOR[0], secret_name(store)) is None:
        return False
    flags = operator_flags(store)
    return _on(flags, "enable-cert-rotation", False) or _mounts_secret(store, flags)


def _mounts_secret(store: Store, flags: dict[str, str]) -> bool:
    dep = store.find("apps/deployments", *OPERATOR) or {}
    pod = ((dep.get("spec") or {}).get("template") or {}).get("spec") or {}
    volumes = {v.get("name") for v in pod.get("volumes") or []
               if (v.get("secret") or {}).get("secretName") == secret_name(store)}
    cert_dir = flags.get("cert-dir", "/certs")
    return any(m.get("name") in volumes and m.get("mountPath") == cert_dir
               for c in pod.get("containers") or [] for m in c.get("volumeMounts") or [])


def rotate(ctx: Ctx, account: tuple[str, str]) -> None:
    """What the running operator's certificate rotation writes: the Secret, then the CA in
    the APIService; each only as far as the operator's RBAC allows."""
    store, ns = ctx.store, OPERATOR[0]
    flags = operator_flags(store)
    if not _on(flags, "enable-cert-rotation", False):
        return
    name = secret_name(store)
    if store.find("secrets", ns, name) is None and authz.service_account_allowed(
            store, account, authz.Request("create", "", "secrets", ns, True)):
        ctx.create("secrets", {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                               "metadata": {"name": name, "namespace": ns},
                               "data": {k: STAND_IN for k in ("ca.crt", "tls.crt", "tls.key")}})
    apiservice = store.find(APISERVICES, "", EXTERNAL) \
        if store.registry.by_key(APISERVICES) else None
    if apiservice is None or not _on(flags, "enable-apiservice-patching", True) or \
            (apiservice.get("spec") or {}).get("caBundle") or \
            store.find("secrets", ns, name) is None or \
            not authz.service_account_allowed(store, account, authz.Request(
                "patch", "apiregistration.k8s.io", "apiservices", "", False)):
        return
    new = clone(apiservice)
    new["spec"]["caBundle"] = STAND_IN
    ctx.update(APISERVICES, new)


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
