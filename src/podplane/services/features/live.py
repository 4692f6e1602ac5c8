"""Reading and changing a feature's resources in the cloud, one resource kind at a time.

Observation returns each resource's live state in the shape its `desired` is written in (so
`domain.features.model.differences` compares like with like) and whether podplane made it
(the feature label on Kubernetes objects, the feature tag on IAM roles).
"""

from __future__ import annotations

import json
from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import NotFound
from podplane.domain.features.checkpointing import POLICY_NAME
from podplane.domain.features.hyperpod_observability import same_configuration
from podplane.domain.features.model import FEATURE_LABEL, FEATURE_TAG, Resource, Seen
from podplane.services.cloud_access import Cloud
from podplane.services.features import fsx, mlflow
from podplane.services.features import hyperpod_observability as hpo
from podplane.services.features import inference_operator as inference

Shape = dict[str, Any]
# A HyperPod setting that was never set reads as switched off.
SETTING_OFF: dict[str, Shape] = {"TieredStorageConfig": {"Mode": "Disable"},
                                 "AutoScaling": {"Mode": "Disable"}}


class Live:
    """One cluster's view for one observation: DescribeCluster and the association list are
    read once and shared by the resources that need them."""

    def __init__(self, cloud: Cloud, hyperpod: str, eks: str, cluster: str = "") -> None:
        self.cloud, self.hyperpod, self.eks = cloud, hyperpod, eks
        self.cluster = cluster   # podplane's name: FSx ownership tags carry it
        self._kube: KubePort | None = None
        self._described: Shape | None = None
        self._associations: list[Shape] | None = None
        self._file_systems: list[Shape] | None = None

    async def kube(self) -> KubePort:
        if self._kube is None:
            self._kube = await self.cloud.kube_for(self.eks)
        return self._kube

    async def described(self, fresh: bool = False) -> Shape:
        if self._described is None or fresh:
            found = await self.cloud.aws.hyperpod.describe_cluster(self.hyperpod)
            if found is None:
                raise NotFound(f"The HyperPod cluster {self.hyperpod} does not exist.")
            self._described = found
        return self._described

    async def associations(self) -> list[Shape]:
        if self._associations is None:
            self._associations = await self.cloud.aws.eks.list_pod_identity_associations(
                self.eks)
        return self._associations

    async def file_systems(self) -> list[Shape]:
        if self._file_systems is None:
            self._file_systems = await self.cloud.aws.fsx.describe_file_systems()
        return self._file_systems

    def forget(self) -> None:
        self._described, self._associations, self._file_systems = None, None, None

    async def observe(self, resources: list[Resource]) -> dict[str, Seen]:
        return {r.key: await self.seen(r) for r in resources}

    async def seen(self, res: Resource) -> Seen:
        if res.kind == "kube":
            return await self._kube_seen(res)
        if res.kind == "hyperpod-setting":
            (field,) = res.desired
            value = (await self.described()).get(field) or SETTING_OFF[field]
            return Seen({field: value}, owned=True)
        if res.kind == "iam-role":
            return await self._role_seen(res)
        if res.kind == "eks-addon":
            return await self._addon_seen(res)
        if res.kind == "oidc-provider":
            return await inference.provider_seen(self, res)
        if res.kind == "amp-workspace":
            return await hpo.workspace_seen(self, res, self.cluster)
        if res.kind == "mlflow-server":
            return await mlflow.server_seen(self, res)
        if res.kind in ("fsx-filesystem", "sg-ingress"):
            return await (fsx.rule_seen(self, res) if res.kind == "sg-ingress" else
                          fsx.file_system_seen(self, res, self.cluster))
        return await self._association_seen(res)

    async def _addon_seen(self, res: Resource) -> Seen:
        """Only our tag is compared: EKS adds its own fields, and other tags are the owner's."""
        name = res.desired["addonName"]
        found = await self.cloud.aws.eks.describe_addon(self.eks, name)
        if found is None or found.get("status") == "DELETING":
            return Seen(None)
        mark = (found.get("tags") or {}).get(FEATURE_TAG)
        live = {"addonName": name, "tags": {FEATURE_TAG: mark} if mark else {}}
        if "configurationValues" in res.desired:   # compared as canonical JSON
            live["configurationValues"] = same_configuration(found.get("configurationValues"))
        return Seen(live, owned=mark == res.feature)

    async def _kube_seen(self, res: Resource) -> Seen:
        obj = res.desired
        meta = obj["metadata"]
        try:
            live = await (await self.kube()).get(obj["apiVersion"], obj["kind"], meta["name"],
                                                 meta.get("namespace"))
        except NotFound:  # the kind itself is not served (its CRD is absent)
            return Seen(None)
        if live is None:
            return Seen(None)
        labels = live["metadata"].get("labels") or {}
        return Seen(live, owned=labels.get(FEATURE_LABEL) == res.feature)

    async def _role_seen(self, res: Resource) -> Seen:
        iam = self.cloud.aws.iam
        name = res.desired["name"]
        role = await iam.get_role(name)
        if role is None:
            return Seen(None)
        trust = role.get("AssumeRolePolicyDocument")
        tags = {t["Key"]: t["Value"] for t in role.get("Tags") or []}
        live = {"name": name, "trust": json.loads(trust) if isinstance(trust, str) else trust,
                "policy": await iam.get_role_policy(name, POLICY_NAME), "tags": tags}
        if "managed" in res.desired:
            live["managed"] = sorted(p["PolicyArn"]
                                     for p in await iam.list_attached_role_policies(name))
        return Seen(live, owned=tags.get(FEATURE_TAG) == res.feature)

    async def _association_seen(self, res: Resource) -> Seen:
        want = res.desired
        for a in await self.associations():
            if (a.get("namespace"), a.get("serviceAccount")) == (want["namespace"],
                                                                  want["serviceAccount"]):
                return await self._association_of(res, a)
        return Seen(None)

    async def _association_of(self, res: Resource, found: Shape) -> Seen:
        live = {"namespace": found["namespace"], "serviceAccount": found["serviceAccount"],
                "associationId": found.get("associationId")}
        if "roleArn" not in res.desired:
            # podplane's own service account: the association is ours because it is
            return Seen(live, owned=True)
        # someone else's service account (an add-on's): ours only if it names our role; the
        # list names no role, DescribePodIdentityAssociation does (EKS API)
        described = await self.cloud.aws.eks.describe_pod_identity_association(
            self.eks, found["associationId"]) or {}
        live["roleArn"] = described.get("roleArn")
        return Seen(live, owned=live["roleArn"] == res.desired["roleArn"])
