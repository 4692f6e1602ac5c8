"""Pod Identity associations an add-on owns (CreateAddon `podIdentityAssociations`).

EKS creates them with the add-on (`ownerArn` = the add-on ARN, so they show in
ListPodIdentityAssociations) and deletes them with it; only the service accounts the add-on
declares are accepted (EKS docs "IAM roles for Amazon EKS add-ons"; the message for an add-on
without Pod Identity support is the one AWS gives: "Pod Identity feature is not supported for
addon version ...").
"""

from __future__ import annotations

from typing import Any

from podplane_sandbox.aws.eks.base import EksBase
from podplane_sandbox.aws.eks.catalog import POD_IDENTITY_ACCOUNTS
from podplane_sandbox.aws.errors import eks_in_use, eks_invalid_param


class AddonIdentityMixin(EksBase):
    def _check_identity_request(self, addon: str, wanted: list[dict[str, Any]],
                                cluster: str) -> None:
        if not wanted:
            return
        account = POD_IDENTITY_ACCOUNTS.get(addon)
        if account is None:
            raise eks_invalid_param(f"Pod Identity feature is not supported for addon: {addon}")
        for item in wanted:
            if item["serviceAccount"] != account[1]:
                raise eks_invalid_param(
                    f"Service account {item['serviceAccount']} is not supported by addon "
                    f"{addon}; supported: {account[1]}")
            taken = [a for a in self.table("pod_identity").get(cluster, {}).values()
                     if (a["namespace"], a["serviceAccount"]) == account]
            if taken:
                raise eks_in_use("Association already exists for this service account: "
                                 f"{taken[0]['associationArn']}")

    def _associate_for_addon(self, cluster: str, addon_arn: str,
                             wanted: list[dict[str, Any]]) -> list[str]:
        namespace = next(ns for ns, sa in POD_IDENTITY_ACCOUNTS.values()
                         if sa == wanted[0]["serviceAccount"])
        arns = []
        for item in wanted:
            made = self.create_pod_identity_association({  # type: ignore[attr-defined]
                "clusterName": cluster, "namespace": namespace,
                "serviceAccount": item["serviceAccount"], "roleArn": item["roleArn"]})
            made["association"]["ownerArn"] = addon_arn
            arns.append(made["association"]["associationArn"])
        return arns

    def _drop_owned_associations(self, cluster: str, addon_arn: str) -> None:
        assocs = self.table("pod_identity").get(cluster, {})
        for assoc_id in [i for i, a in assocs.items() if a.get("ownerArn") == addon_arn]:
            del assocs[assoc_id]

    def pod_identity_role(self, eks_cluster_name: str | None, namespace: str,
                          service_account: str) -> str | None:
        """The role an association gives this service account now (any cluster when None)."""
        self.w.tick()
        with self.w.lock:
            for cluster, assocs in self.table("pod_identity").items():
                if eks_cluster_name not in (None, cluster):
                    continue
                for a in assocs.values():
                    if (a["namespace"], a["serviceAccount"]) == (namespace, service_account):
                        return str(a["roleArn"])
        return None
