"""EksPort over boto3."""

from __future__ import annotations

from typing import Any

from podplane.cloud.aws.caller import AwsCaller
from podplane.cloud.ports_aws import Shape


def _one(result: Shape, key: str) -> Shape:
    return dict(result[key])


def _token(token: str | None) -> dict[str, str]:
    return {"clientRequestToken": token} if token else {}


class EksAdapter:
    def __init__(self, caller: AwsCaller) -> None:
        self.aws = caller

    async def _call(self, operation: str, **params: Any) -> Shape:
        return await self.aws.call("eks", operation, **params)

    async def _all(self, operation: str, key: str, **params: Any) -> list[Any]:
        """Every page of a list call (EKS pages with nextToken; the add-on catalogue alone is
        more than one page)."""
        items: list[Any] = []
        token: str | None = None
        while True:
            page = await self._call(operation, **params, **({"nextToken": token} if token else {}))
            items += page.get(key, [])
            token = page.get("nextToken")
            if not token:
                return items

    async def create_cluster(self, name: str, role_arn: str, subnet_ids: list[str],
                             security_group_ids: list[str], version: str | None = None,
                             client_token: str | None = None, **extra: Any) -> Shape:
        vpc = {"subnetIds": subnet_ids, "securityGroupIds": security_group_ids}
        params = {"name": name, "roleArn": role_arn, "resourcesVpcConfig": vpc, **extra,
                  **_token(client_token), **({"version": version} if version else {})}
        return _one(await self._call("create_cluster", **params), "cluster")

    async def describe_cluster(self, name: str) -> Shape | None:
        found = await self.aws.maybe("eks", "describe_cluster", name=name)
        return dict(found["cluster"]) if found else None

    async def list_clusters(self) -> list[str]:
        return list((await self._call("list_clusters"))["clusters"])

    async def delete_cluster(self, name: str) -> Shape:
        return _one(await self._call("delete_cluster", name=name), "cluster")

    async def update_cluster_config(self, name: str, client_token: str | None = None,
                                    **changes: Any) -> Shape:
        result = await self._call("update_cluster_config", name=name, **changes,
                                  **_token(client_token))
        return _one(result, "update")

    async def describe_update(self, name: str, update_id: str,
                              addon_name: str | None = None) -> Shape:
        extra = {"addonName": addon_name} if addon_name else {}
        return _one(await self._call("describe_update", name=name, updateId=update_id,
                                 **extra), "update")

    async def describe_addon_versions(self, addon_name: str | None = None,
                                      kubernetes_version: str | None = None) -> list[Shape]:
        params = {k: v for k, v in (("addonName", addon_name),
                                    ("kubernetesVersion", kubernetes_version)) if v}
        return await self._all("describe_addon_versions", "addons", **params)

    async def create_addon(self, cluster: str, addon: str, version: str | None = None,
                           client_token: str | None = None, **extra: Any) -> Shape:
        params = {"clusterName": cluster, "addonName": addon, **extra, **_token(client_token),
                  **({"addonVersion": version} if version else {})}
        return _one(await self._call("create_addon", **params), "addon")

    async def describe_addon(self, cluster: str, addon: str) -> Shape | None:
        found = await self.aws.maybe("eks", "describe_addon", clusterName=cluster,
                                     addonName=addon)
        return dict(found["addon"]) if found else None

    async def list_addons(self, cluster: str) -> list[str]:
        return await self._all("list_addons", "addons", clusterName=cluster)

    async def update_addon(self, cluster: str, addon: str, client_token: str | None = None,
                           **changes: Any) -> Shape:
        return _one(await self._call("update_addon", clusterName=cluster, addonName=addon,
                                 **changes, **_token(client_token)), "update")

    async def delete_addon(self, cluster: str, addon: str) -> Shape:
        return _one(await self._call("delete_addon", clusterName=cluster, addonName=addon), "addon")

    async def create_access_entry(self, cluster: str, principal_arn: str,
                                  **extra: Any) -> Shape:
        return _one(await self._call("create_access_entry", clusterName=cluster,
                                 principalArn=principal_arn, **extra), "accessEntry")

    async def list_access_entries(self, cluster: str) -> list[str]:
        return list((await self._call("list_access_entries",
                                      clusterName=cluster))["accessEntries"])

    async def associate_access_policy(self, cluster: str, principal_arn: str, policy_arn: str,
                                      scope: Shape) -> Shape:
        return await self._call("associate_access_policy", clusterName=cluster,
                                principalArn=principal_arn, policyArn=policy_arn,
                                accessScope=scope)

    async def create_pod_identity_association(self, cluster: str, namespace: str,
                                              service_account: str, role_arn: str,
                                              client_token: str | None = None) -> Shape:
        return _one(await self._call("create_pod_identity_association", clusterName=cluster,
                                 namespace=namespace, serviceAccount=service_account,
                                 roleArn=role_arn, **_token(client_token)), "association")

    async def list_pod_identity_associations(self, cluster: str) -> list[Shape]:
        return await self._all("list_pod_identity_associations", "associations",
                               clusterName=cluster)

    async def describe_pod_identity_association(self, cluster: str,
                                                association_id: str) -> Shape | None:
        found = await self.aws.maybe("eks", "describe_pod_identity_association",
                                     clusterName=cluster, associationId=association_id)
        return dict(found["association"]) if found else None

    async def delete_pod_identity_association(self, cluster: str, association_id: str) -> Shape:
        return _one(await self._call("delete_pod_identity_association", clusterName=cluster,
                                 associationId=association_id), "association")
