"""EksPort in memory: clusters, add-ons, access entries and Pod Identity associations."""

from __future__ import annotations

from typing import Any

from tests.fakes.base import FakePort

Shape = dict[str, Any]


class FakeEks(FakePort):
    service = "eks"

    def __init__(self) -> None:
        super().__init__()
        self.clusters: dict[str, Shape] = {}
        self.addons: dict[tuple[str, str], Shape] = {}
        self.catalogue: list[Shape] = []
        self.access_entries: dict[str, list[str]] = {}
        self.associations: dict[str, list[Shape]] = {}

    def _cluster(self, operation: str, name: str) -> Shape:
        if name not in self.clusters:
            raise self.refuse(operation, "ResourceNotFoundException", name)
        return self.clusters[name]

    async def create_cluster(self, name: str, role_arn: str, subnet_ids: list[str],
                             security_group_ids: list[str], version: str | None = None,
                             client_token: str | None = None, **extra: Any) -> Shape:
        self._enter("create_cluster", name=name, roleArn=role_arn)
        self.clusters[name] = {"name": name, "arn": f"arn:aws:eks:us-west-2:1:cluster/{name}",
                               "status": "CREATING", "roleArn": role_arn, **extra}
        return dict(self.clusters[name])

    async def describe_cluster(self, name: str) -> Shape | None:
        return dict(self.clusters[name]) if name in self.clusters else None

    async def list_clusters(self) -> list[str]:
        return list(self.clusters)

    async def delete_cluster(self, name: str) -> Shape:
        self._enter("delete_cluster", name=name)
        return self.clusters.pop(name)

    async def update_cluster_config(self, name: str, client_token: str | None = None,
                                    **changes: Any) -> Shape:
        self._enter("update_cluster_config", name=name, **changes)
        return {"id": "update-1", "status": "InProgress"}

    async def describe_update(self, name: str, update_id: str,
                              addon_name: str | None = None) -> Shape:
        return {"id": update_id, "status": "Successful"}

    async def describe_addon_versions(self, addon_name: str | None = None,
                                      kubernetes_version: str | None = None) -> list[Shape]:
        return [a for a in self.catalogue if addon_name in (None, a["addonName"])]

    async def create_addon(self, cluster: str, addon: str, version: str | None = None,
                           client_token: str | None = None, **extra: Any) -> Shape:
        self._enter("create_addon", cluster=cluster, addon=addon, version=version, **extra)
        self._cluster("create_addon", cluster)
        self.addons[(cluster, addon)] = {"addonName": addon, "status": "ACTIVE",
                                         "addonVersion": version or "v1", **extra}
        return dict(self.addons[(cluster, addon)])

    async def describe_addon(self, cluster: str, addon: str) -> Shape | None:
        found = self.addons.get((cluster, addon))
        return dict(found) if found else None

    async def list_addons(self, cluster: str) -> list[str]:
        return [a for c, a in self.addons if c == cluster]

    async def update_addon(self, cluster: str, addon: str, client_token: str | None = None,
                           **changes: Any) -> Shape:
        self._enter("update_addon", cluster=cluster, addon=addon, **changes)
        self.addons[(cluster, addon)].update(changes)
        return {"id": "update-2", "status": "InProgress"}

    async def delete_addon(self, cluster: str, addon: str) -> Shape:
        self._enter("delete_addon", cluster=cluster, addon=addon)
        return self.addons.pop((cluster, addon))

    async def create_access_entry(self, cluster: str, principal_arn: str,
                                  **extra: Any) -> Shape:
        self._enter("create_access_entry", cluster=cluster, principal=principal_arn)
        self.access_entries.setdefault(cluster, []).append(principal_arn)
        return {"principalArn": principal_arn}

    async def list_access_entries(self, cluster: str) -> list[str]:
        self._enter("list_access_entries", cluster=cluster)
        return list(self.access_entries.get(cluster, []))

    async def associate_access_policy(self, cluster: str, principal_arn: str, policy_arn: str,
                                      scope: Shape) -> Shape:
        self._enter("associate_access_policy", cluster=cluster, policy=policy_arn)
        return {"principalArn": principal_arn}

    async def create_pod_identity_association(self, cluster: str, namespace: str,
                                              service_account: str, role_arn: str,
                                              client_token: str | None = None) -> Shape:
        self._enter("create_pod_identity_association", cluster=cluster, role=role_arn)
        made = {"associationId": f"a-{len(self.associations.get(cluster, []))}",
                "namespace": namespace, "serviceAccount": service_account, "roleArn": role_arn}
        self.associations.setdefault(cluster, []).append(made)
        return dict(made)

    async def list_pod_identity_associations(self, cluster: str) -> list[Shape]:
        return [dict(a) for a in self.associations.get(cluster, [])]

    async def describe_pod_identity_association(self, cluster: str,
                                                association_id: str) -> Shape | None:
        return next((dict(a) for a in self.associations.get(cluster, [])
                     if a["associationId"] == association_id), None)

    async def delete_pod_identity_association(self, cluster: str, association_id: str) -> Shape:
        self._enter("delete_pod_identity_association", cluster=cluster, id=association_id)
        kept = [a for a in self.associations.get(cluster, [])
                if a["associationId"] != association_id]
        self.associations[cluster] = kept
        return {"associationId": association_id}
