"""What an EKS access entry lets its principal do: access policies, then Kubernetes RBAC.

Sources: the EKS user guide "Review access policy permissions" (access policies hold only
allow rules, "similar to the Kubernetes user-facing cluster roles"; a cluster scope applies
everywhere, a namespace scope only in the listed namespaces) and the Kubernetes RBAC
"User-facing roles" (cluster-admin, admin, edit, view). An entry's kubernetesGroups are
matched against the subjects of ClusterRoleBindings and RoleBindings in the cluster's store.
Where the EKS page lists fine-grained rules the sandbox keeps to the user-facing role they
resemble, and denies what it cannot place (the stricter side).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from podplane_sandbox.contracts import AccessGrant
from podplane_sandbox.kube.store import Store

READ = frozenset({"get", "list", "watch"})
ANY = "*"
RBAC_GROUP = "rbac.authorization.k8s.io"
# kubelet-like identities (EKS access entry types for nodes): read, and report node state
NODE_TYPES = {"EC2_LINUX", "EC2_WINDOWS", "HYPERPOD_LINUX", "FARGATE_LINUX", "EC2"}


@dataclass(frozen=True)
class Request:
    verb: str           # get list watch create update patch delete deletecollection
    group: str          # API group ("" = core)
    resource: str       # plural, with "/sub" for a subresource
    namespace: str      # "" for cluster-scoped resources or across all namespaces
    namespaced: bool    # the resource type is namespaced


def allowed(grant: AccessGrant, req: Request, store: Store | None = None) -> bool:
    if grant.entry_type in NODE_TYPES:
        return _node_rule(req)
    for name, scope, namespaces in grant.policies:
        if _in_scope(scope, namespaces, req) and _policy_allows(name, req, scope == "cluster"):
            return True
    return bool(grant.groups) and store is not None and _rbac_allows(store, grant.groups, req)


def _in_scope(scope: str, namespaces: tuple[str, ...], req: Request) -> bool:
    if scope == "cluster":
        return True
    return req.namespaced and req.namespace in namespaces


def _policy_allows(name: str, req: Request, cluster_scope: bool) -> bool:
    base, _, sub = req.resource.partition("/")
    if name == "AmazonEKSClusterAdminPolicy":
        return True
    if name == "AmazonEKSAdminViewPolicy":
        return req.verb in READ
    if not req.namespaced:  # admin/edit/view reach cluster-scoped objects only to read
        return req.verb in READ and base == "namespaces" and cluster_scope
    if name == "AmazonEKSAdminPolicy":
        return base not in ("resourcequotas", "limitranges") or req.verb in READ
    if name == "AmazonEKSEditPolicy":
        if req.group == RBAC_GROUP:
            return False
        return base not in ("resourcequotas", "limitranges") or req.verb in READ
    if name == "AmazonEKSViewPolicy":
        return req.verb in READ and base != "secrets" and sub in ("", "log", "status")
    if name.startswith("AmazonSagemakerHyperpod"):  # HyperPod's own controllers
        return req.verb in READ or base in ("pods", "nodes", "events")
    return False


def _node_rule(req: Request) -> bool:
    base = req.resource.partition("/")[0]
    return req.verb in READ or base in ("nodes", "events", "leases") or req.resource in (
        "pods/status", "nodes/status")


def _rbac_allows(store: Store, groups: tuple[str, ...], req: Request) -> bool:
    for binding in store.items("rbac.authorization.k8s.io/clusterrolebindings"):
        if _binds(binding, groups) and _role_allows(store, binding["roleRef"], "", req):
            return True
    if not req.namespace:
        return False
    for binding in store.items("rbac.authorization.k8s.io/rolebindings"):
        if binding["metadata"].get("namespace") == req.namespace and _binds(binding, groups) \
                and _role_allows(store, binding["roleRef"], req.namespace, req):
            return True
    return False


def _binds(binding: dict[str, Any], groups: tuple[str, ...]) -> bool:
    return any(s.get("kind") == "Group" and s.get("name") in groups
               for s in binding.get("subjects") or [])


def _role_allows(store: Store, ref: dict[str, Any], namespace: str, req: Request) -> bool:
    if ref.get("kind") == "ClusterRole":
        role = store.find("rbac.authorization.k8s.io/clusterroles", "", ref.get("name", ""))
    else:
        role = store.find("rbac.authorization.k8s.io/roles", namespace, ref.get("name", ""))
    return role is not None and any(_rule_matches(r, req) for r in role.get("rules") or [])


def role_allows(store: Store, ref: dict[str, Any], namespace: str, req: Request) -> bool:
    """Whether the Role or ClusterRole a binding refers to allows the request."""
    return _role_allows(store, ref, namespace, req)


def _rule_matches(rule: dict[str, Any], req: Request) -> bool:
    groups, resources, verbs = (rule.get(k) or [] for k in ("apiGroups", "resources", "verbs"))
    return ((ANY in groups or req.group in groups)
            and (ANY in resources or req.resource in resources)
            and (ANY in verbs or req.verb in verbs))


def service_account_allowed(store: Store, account: tuple[str, str], req: Request) -> bool:
    """Whether the ServiceAccount (namespace, name) may make the request: a ClusterRoleBinding
    anywhere, or a RoleBinding in the request's namespace, whose subjects name it and whose
    role allows it (Kubernetes docs "Using RBAC Authorization": subjects of kind
    ServiceAccount; a RoleBinding grants only inside its own namespace)."""
    for binding in store.items("rbac.authorization.k8s.io/clusterrolebindings"):
        if names_account(binding, account) and _role_allows(store, binding["roleRef"], "", req):
            return True
    if not req.namespace:
        return False
    return any(names_account(b, account)
               and _role_allows(store, b["roleRef"], req.namespace, req)
               for b in store.items("rbac.authorization.k8s.io/rolebindings", req.namespace))


def names_account(binding: dict[str, Any], account: tuple[str, str]) -> bool:
    """The binding's subjects include the ServiceAccount (namespace, name)."""
    return any(s.get("kind") == "ServiceAccount" and s.get("name") == account[1]
               and s.get("namespace") == account[0] for s in binding.get("subjects") or [])
