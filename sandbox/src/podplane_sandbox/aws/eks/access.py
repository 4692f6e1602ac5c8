"""EKS access entries + access policies, and EKS Pod Identity associations."""

from __future__ import annotations

from typing import Any, cast

from podplane_sandbox.aws import iam_rules
from podplane_sandbox.aws.base import paginate
from podplane_sandbox.aws.callers import DEFAULT_ARN, caller_of
from podplane_sandbox.aws.eks.base import EksBase
from podplane_sandbox.aws.errors import (
    eks_in_use,
    eks_invalid_param,
    eks_invalid_request,
    eks_not_found,
)
from podplane_sandbox.aws.world import ACCOUNT, World
from podplane_sandbox.contracts import AccessGrant, Signer

POLICY_PREFIX = "arn:aws:eks::aws:cluster-access-policy/"
ACCESS_POLICIES = ["AmazonEKSAdminPolicy", "AmazonEKSClusterAdminPolicy", "AmazonEKSEditPolicy",
                   "AmazonEKSViewPolicy", "AmazonEKSAdminViewPolicy",
                   "AmazonSagemakerHyperpodControllerPolicy",
                   "AmazonSagemakerHyperpodClusterEventPolicy"]
ADMIN_POLICY = POLICY_PREFIX + "AmazonEKSClusterAdminPolicy"


class AccessMixin(EksBase):
    # access entries -----------------------------------------------------------------------
    def _entries(self, cluster: str) -> dict[str, Any]:
        c = self.cluster(cluster)
        if c["accessConfig"]["authenticationMode"] == "CONFIG_MAP":
            raise eks_invalid_request(
                "The cluster's authentication mode must be set to one of "
                "[API, API_AND_CONFIG_MAP] to perform this operation.")
        return cast("dict[str, Any]", self.table("access").setdefault(cluster, {}))

    def _entry(self, cluster: str, principal: str) -> dict[str, Any]:
        entry = self._entries(cluster).get(principal)
        if entry is None:
            raise eks_not_found(f"The specified principalArn could not be found. "
                                f"You can view your available access entries with "
                                f"'aws eks list-access-entries --cluster-name {cluster}'.")
        return cast("dict[str, Any]", entry)

    def bootstrap_admin(self, cluster: str, creator: str | None) -> None:
        """bootstrapClusterCreatorAdminPermissions: the IAM principal that created the cluster
        gets an access entry with AmazonEKSClusterAdminPolicy at cluster scope (EKS user
        guide, "Grant IAM users access to Kubernetes with EKS access entries")."""
        entry = self._put_entry(cluster, {"principalArn": creator or DEFAULT_ARN})
        entry["_policies"][ADMIN_POLICY] = {
            "policyArn": ADMIN_POLICY, "accessScope": {"type": "cluster", "namespaces": []},
            "associatedAt": self.w.now(), "modifiedAt": self.w.now()}

    def _put_entry(self, cluster: str, p: dict[str, Any]) -> dict[str, Any]:
        now = self.w.now()
        principal = p["principalArn"]
        name = principal.split("/")[-1]
        kind = "user" if ":user/" in principal else "role"
        entry = {"clusterName": cluster, "principalArn": principal,
                 "kubernetesGroups": p.get("kubernetesGroups", []),
                 "accessEntryArn": self.w.arn("eks", f"access-entry/{cluster}/{kind}/{ACCOUNT}/"
                                              f"{name}/{self.w.hex_id(8)}"),
                 "createdAt": now, "modifiedAt": now, "tags": p.get("tags", {}),
                 "username": p.get("username") or principal, "type": p.get("type", "STANDARD"),
                 "_policies": {}}
        self.table("access").setdefault(cluster, {})[principal] = entry
        return entry

    def create_access_entry(self, p: dict[str, Any]) -> dict[str, Any]:
        entries = self._entries(p["clusterName"])
        if p["principalArn"] in entries:
            raise eks_in_use("The specified access entry resource is already in use on this "
                             "cluster.")
        if not p["principalArn"].startswith("arn:aws:iam::"):
            raise eks_invalid_param(f"The specified principalArn is invalid: {p['principalArn']}")
        entry = self._put_entry(p["clusterName"], p)
        self.w.record("eks", "CreateAccessEntry", f"{p['clusterName']}/{p['principalArn']}",
                      p.get("clientRequestToken"))
        return {"accessEntry": entry}

    def describe_access_entry(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"accessEntry": self._entry(p["clusterName"], p["principalArn"])}

    def list_access_entries(self, p: dict[str, Any]) -> dict[str, Any]:
        arns = sorted(self._entries(p["clusterName"]))
        if p.get("associatedPolicyArn"):
            entries = self._entries(p["clusterName"])
            arns = [a for a in arns if p["associatedPolicyArn"] in entries[a]["_policies"]]
        page, nxt = paginate(arns, p, "maxResults", "nextToken")
        return {"accessEntries": page, **({"nextToken": nxt} if nxt else {})}

    def update_access_entry(self, p: dict[str, Any]) -> dict[str, Any]:
        entry = self._entry(p["clusterName"], p["principalArn"])
        for key in ("kubernetesGroups", "username"):
            if key in p:
                entry[key] = p[key]
        entry["modifiedAt"] = self.w.now()
        self.w.record("eks", "UpdateAccessEntry", f"{p['clusterName']}/{p['principalArn']}",
                      p.get("clientRequestToken"))
        return {"accessEntry": entry}

    def delete_access_entry(self, p: dict[str, Any]) -> dict[str, Any]:
        self._entry(p["clusterName"], p["principalArn"])
        del self._entries(p["clusterName"])[p["principalArn"]]
        self.w.record("eks", "DeleteAccessEntry", f"{p['clusterName']}/{p['principalArn']}")
        return {}

    def list_access_policies(self, p: dict[str, Any]) -> dict[str, Any]:
        items = [{"name": n, "arn": POLICY_PREFIX + n} for n in ACCESS_POLICIES]
        page, nxt = paginate(items, p, "maxResults", "nextToken")
        return {"accessPolicies": page, **({"nextToken": nxt} if nxt else {})}

    def associate_access_policy(self, p: dict[str, Any]) -> dict[str, Any]:
        entry = self._entry(p["clusterName"], p["principalArn"])
        if p["policyArn"].removeprefix(POLICY_PREFIX) not in ACCESS_POLICIES:
            raise eks_not_found(f"The specified policyArn {p['policyArn']} could not be found.")
        scope = p["accessScope"]
        if scope.get("type") == "namespace" and not scope.get("namespaces"):
            raise eks_invalid_param("namespaces must be specified for a namespace access scope")
        now = self.w.now()
        old = entry["_policies"].get(p["policyArn"])
        assoc = {"policyArn": p["policyArn"], "accessScope": scope,
                 "associatedAt": old["associatedAt"] if old else now, "modifiedAt": now}
        entry["_policies"][p["policyArn"]] = assoc
        self.w.record("eks", "AssociateAccessPolicy", f"{p['clusterName']}/{p['principalArn']}",
                      policy=p["policyArn"])
        return {"clusterName": p["clusterName"], "principalArn": p["principalArn"],
                "associatedAccessPolicy": assoc}

    def list_associated_access_policies(self, p: dict[str, Any]) -> dict[str, Any]:
        entry = self._entry(p["clusterName"], p["principalArn"])
        items = list(entry["_policies"].values())
        page, nxt = paginate(items, p, "maxResults", "nextToken")
        return {"clusterName": p["clusterName"], "principalArn": p["principalArn"],
                "associatedAccessPolicies": page, **({"nextToken": nxt} if nxt else {})}

    def disassociate_access_policy(self, p: dict[str, Any]) -> dict[str, Any]:
        entry = self._entry(p["clusterName"], p["principalArn"])
        if entry["_policies"].pop(p["policyArn"], None) is None:
            raise eks_not_found(f"The specified policyArn {p['policyArn']} is not associated.")
        self.w.record("eks", "DisassociateAccessPolicy",
                      f"{p['clusterName']}/{p['principalArn']}", policy=p["policyArn"])
        return {}

    # pod identity -------------------------------------------------------------------------
    def _assocs(self, cluster: str) -> dict[str, Any]:
        self.cluster(cluster)
        return cast("dict[str, Any]", self.table("pod_identity").setdefault(cluster, {}))

    def _assoc(self, cluster: str, assoc_id: str) -> dict[str, Any]:
        assoc = self._assocs(cluster).get(assoc_id)
        if assoc is None:
            raise eks_not_found(f"No Pod Identity Association found for id {assoc_id}")
        return cast("dict[str, Any]", assoc)

    def create_pod_identity_association(self, p: dict[str, Any]) -> dict[str, Any]:
        assocs = self._assocs(p["clusterName"])
        iam_rules.check_pod_identity_role(self.w, p["roleArn"])
        for a in assocs.values():
            if (a["namespace"], a["serviceAccount"]) == (p["namespace"], p["serviceAccount"]):
                if p.get("clientRequestToken") and a.get("_token") == p["clientRequestToken"]:
                    return {"association": a}  # an idempotent retry
                raise eks_in_use("Association already exists for this service account: "
                                 f"{a['associationArn']}")
        now = self.w.now()
        assoc_id = "a-" + self.w.hex_id(17)
        assoc = {"clusterName": p["clusterName"], "namespace": p["namespace"],
                 "serviceAccount": p["serviceAccount"], "roleArn": p["roleArn"],
                 "associationArn": self.w.arn(
                     "eks", f"podidentityassociation/{p['clusterName']}/{assoc_id}"),
                 "associationId": assoc_id, "tags": p.get("tags", {}), "createdAt": now,
                 "modifiedAt": now, "disableSessionTags": p.get("disableSessionTags", False),
                 "_token": p.get("clientRequestToken")}
        assocs[assoc_id] = assoc
        self.w.record("eks", "CreatePodIdentityAssociation",
                      f"{p['clusterName']}/{p['namespace']}/{p['serviceAccount']}",
                      p.get("clientRequestToken"))
        return {"association": assoc}

    def describe_pod_identity_association(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"association": self._assoc(p["clusterName"], p["associationId"])}

    def list_pod_identity_associations(self, p: dict[str, Any]) -> dict[str, Any]:
        items = [a for a in self._assocs(p["clusterName"]).values()
                 if p.get("namespace") in (None, a["namespace"])
                 and p.get("serviceAccount") in (None, a["serviceAccount"])]
        summaries = [{k: a[k] for k in ("clusterName", "namespace", "serviceAccount",
                                        "associationArn", "associationId")} for a in items]
        page, nxt = paginate(summaries, p, "maxResults", "nextToken")
        return {"associations": page, **({"nextToken": nxt} if nxt else {})}

    def update_pod_identity_association(self, p: dict[str, Any]) -> dict[str, Any]:
        assoc = self._assoc(p["clusterName"], p["associationId"])
        if "roleArn" in p:
            iam_rules.check_pod_identity_role(self.w, p["roleArn"])
        for key in ("roleArn", "disableSessionTags"):
            if key in p:
                assoc[key] = p[key]
        assoc["modifiedAt"] = self.w.now()
        self.w.record("eks", "UpdatePodIdentityAssociation",
                      f"{p['clusterName']}/{p['associationId']}", p.get("clientRequestToken"))
        return {"association": assoc}

    def delete_pod_identity_association(self, p: dict[str, Any]) -> dict[str, Any]:
        assoc = self._assoc(p["clusterName"], p["associationId"])
        del self._assocs(p["clusterName"])[p["associationId"]]
        self.w.record("eks", "DeletePodIdentityAssociation",
                      f"{p['clusterName']}/{p['associationId']}")
        return {"association": assoc}


# What the Kubernetes API servers read --------------------------------------------------------
def grant_of(world: World, cluster: str, principal: str) -> AccessGrant | None:
    """The access entry of `principal` on `cluster` as the authorizer needs it, or None.

    A CONFIG_MAP-mode cluster has no access entries: only its creator gets in (EKS makes the
    creator a system:masters member it does not show); the aws-auth ConfigMap is not read by
    the sandbox (stricter).
    """
    with world.lock:
        c = world.service_state("eks").get("clusters", {}).get(cluster)
        if c is None or c["status"] not in ("ACTIVE", "UPDATING"):
            return None
        entry = world.service_state("eks").get("access", {}).get(cluster, {}).get(principal)
        if entry is None:
            if c["accessConfig"]["authenticationMode"] == "CONFIG_MAP" and \
                    c.get("_creator") == principal:
                return AccessGrant(principal, policies=(("AmazonEKSClusterAdminPolicy",
                                                         "cluster", ()),))
            return None
        policies = tuple((a["policyArn"].removeprefix(POLICY_PREFIX), a["accessScope"]["type"],
                          tuple(a["accessScope"].get("namespaces") or ()))
                         for a in entry["_policies"].values())
        return AccessGrant(entry["username"], entry["type"], policies,
                           tuple(entry.get("kubernetesGroups") or ()))


def add_hyperpod_node_entry(world: World, cluster: str, role_arn: str) -> None:
    """HyperPod CreateCluster gives the execution role a HYPERPOD_LINUX access entry, so its
    nodes can join the EKS cluster (HyperPod EKS prerequisites; `ClusterMetadata.
    EksRoleAccessEntries` in DescribeCluster). No entry in CONFIG_MAP mode or when it exists."""
    with world.lock:
        eks = world.service_state("eks")
        c = eks.get("clusters", {}).get(cluster)
        if c is None or c["accessConfig"]["authenticationMode"] == "CONFIG_MAP":
            return
        entries = eks.setdefault("access", {}).setdefault(cluster, {})
        if role_arn in entries:
            return
        now = world.now()
        entries[role_arn] = {
            "clusterName": cluster, "principalArn": role_arn, "kubernetesGroups": [],
            "accessEntryArn": world.arn("eks", f"access-entry/{cluster}/role/{ACCOUNT}/"
                                        f"{role_arn.split('/')[-1]}/{world.hex_id(8)}"),
            "createdAt": now, "modifiedAt": now, "tags": {},
            "username": "system:node:{{SessionName}}", "type": "HYPERPOD_LINUX",
            "_policies": {}}  # made by HyperPod, not a client call: not in the ledger


def hyperpod_access_entries(world: World, create_cluster: dict[str, Any]) -> None:
    """The HYPERPOD_LINUX entries a HyperPod CreateCluster request leads to."""
    eks = ((create_cluster.get("Orchestrator") or {}).get("Eks") or {}).get("ClusterArn", "")
    roles = {g["ExecutionRole"] for g in create_cluster.get("InstanceGroups", [])
             if g.get("ExecutionRole")}
    for role in sorted(roles):
        add_hyperpod_node_entry(world, eks.rsplit("/", 1)[-1], role)


class KubeAccess:
    """What the Kubernetes API servers ask the AWS side (contracts.AccessSource)."""

    def __init__(self, world: World) -> None:
        self.w = world

    def signer(self, access_key: str) -> Signer | None:
        with self.w.lock:  # moto's backends are plain dicts
            caller = caller_of(access_key)
        return Signer(caller.arn, caller.principal_arn, caller.secret) if caller else None

    def grant(self, eks_cluster_name: str, principal_arn: str) -> AccessGrant | None:
        return grant_of(self.w, eks_cluster_name, principal_arn)
