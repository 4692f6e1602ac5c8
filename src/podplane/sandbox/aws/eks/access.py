"""EKS access entries + access policies, and EKS Pod Identity associations."""

from __future__ import annotations

from typing import Any, cast

from podplane.sandbox.aws import iam_rules
from podplane.sandbox.aws.base import paginate
from podplane.sandbox.aws.eks.base import EksBase
from podplane.sandbox.aws.errors import (
    eks_in_use,
    eks_invalid_param,
    eks_invalid_request,
    eks_not_found,
)
from podplane.sandbox.aws.world import ACCOUNT

POLICY_PREFIX = "arn:aws:eks::aws:cluster-access-policy/"
ACCESS_POLICIES = ["AmazonEKSAdminPolicy", "AmazonEKSClusterAdminPolicy", "AmazonEKSEditPolicy",
                   "AmazonEKSViewPolicy", "AmazonEKSAdminViewPolicy",
                   "AmazonSagemakerHyperpodControllerPolicy",
                   "AmazonSagemakerHyperpodClusterEventPolicy"]
CALLER_ARN = f"arn:aws:iam::{ACCOUNT}:user/moto"


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

    def bootstrap_admin(self, cluster: str) -> None:
        entry = self._put_entry(cluster, {"principalArn": CALLER_ARN})
        entry["_policies"][POLICY_PREFIX + "AmazonEKSClusterAdminPolicy"] = {
            "policyArn": POLICY_PREFIX + "AmazonEKSClusterAdminPolicy",
            "accessScope": {"type": "cluster", "namespaces": []},
            "associatedAt": self.w.now(), "modifiedAt": self.w.now()}

    def _put_entry(self, cluster: str, p: dict[str, Any]) -> dict[str, Any]:
        now = self.w.now()
        principal = p["principalArn"]
        name = principal.split("/")[-1]
        entry = {"clusterName": cluster, "principalArn": principal,
                 "kubernetesGroups": p.get("kubernetesGroups", []),
                 "accessEntryArn": self.w.arn("eks", f"access-entry/{cluster}/role/{ACCOUNT}/"
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
