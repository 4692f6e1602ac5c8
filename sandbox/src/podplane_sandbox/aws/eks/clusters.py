"""EKS clusters: CREATING -> ACTIVE after ~10 virtual minutes, UPDATING, DELETING; updates; tags."""

from __future__ import annotations

import json
import uuid
from typing import Any, cast

from podplane_sandbox.aws import iam_rules
from podplane_sandbox.aws.base import paginate
from podplane_sandbox.aws.eks.access import AccessMixin
from podplane_sandbox.aws.eks.addons import AddonsMixin
from podplane_sandbox.aws.eks.catalog import K8S_VERSIONS
from podplane_sandbox.aws.eks.zones import ZonesMixin
from podplane_sandbox.aws.errors import (
    AwsError,
    eks_in_use,
    eks_invalid_param,
    eks_invalid_request,
    eks_not_found,
)
from podplane_sandbox.tally import MANAGED_TAG, note

CREATE_SECONDS = 600.0
UPDATE_SECONDS = 180.0
DELETE_SECONDS = 300.0
DEFAULT_VERSION = "1.33"
CONFIG_FIELDS = ("resourcesVpcConfig", "logging", "accessConfig", "upgradePolicy",
                 "zonalShiftConfig", "computeConfig", "kubernetesNetworkConfig", "storageConfig",
                 "remoteNetworkConfig")


class ClustersMixin(AccessMixin, AddonsMixin, ZonesMixin):
    def create_cluster(self, p: dict[str, Any]) -> dict[str, Any]:
        name = p["name"]
        existing = self.table("clusters").get(name)
        if existing is not None:
            if _same_token(existing, p):  # an idempotent retry: same answer, no new mutation
                return {"cluster": existing}
            raise eks_in_use(f"Cluster already exists with name: {name}")
        if p.get("version") and p["version"] not in K8S_VERSIONS:
            raise eks_invalid_param(f"unsupported Kubernetes version {p['version']}")
        self._check_subnets(p.get("resourcesVpcConfig", {}).get("subnetIds", []))
        self.check_zones(name, p.get("resourcesVpcConfig", {}).get("subnetIds", []))
        iam_rules.check_eks_cluster_role(self.w, p["roleArn"])
        now = self.w.now()
        access = {"authenticationMode": "CONFIG_MAP",
                  "bootstrapClusterCreatorAdminPermissions": True, **p.get("accessConfig", {})}
        vpc = {"endpointPublicAccess": True, "endpointPrivateAccess": False,
               "publicAccessCidrs": ["0.0.0.0/0"], **p.get("resourcesVpcConfig", {})}
        vpc.setdefault("clusterSecurityGroupId", "sg-" + self.w.hex_id(17))
        vpc.setdefault("vpcId", "vpc-" + self.w.hex_id(17))
        oidc = self.w.hex_id(32).upper()
        c = {
            "name": name, "arn": self.w.arn("eks", f"cluster/{name}"), "createdAt": now,
            "version": p.get("version") or DEFAULT_VERSION, "roleArn": p["roleArn"],
            "resourcesVpcConfig": vpc,
            "kubernetesNetworkConfig": {"serviceIpv4Cidr": "10.100.0.0/16", "ipFamily": "ipv4",
                                        **p.get("kubernetesNetworkConfig", {})},
            "logging": p.get("logging") or {"clusterLogging": [{"types": ["api", "audit",
                "authenticator", "controllerManager", "scheduler"], "enabled": False}]},
            "identity": {"oidc": {"issuer": f"https://oidc.eks.{self.w.region}.amazonaws.com/id/{oidc}"}},
            "status": "CREATING", "platformVersion": "eks.1", "tags": p.get("tags", {}),
            "accessConfig": {k: v for k, v in access.items()
                             if k == "authenticationMode"},
            "upgradePolicy": p.get("upgradePolicy") or {"supportType": "EXTENDED"},
            "health": {"issues": []},
            "_ready_at": now + CREATE_SECONDS + self.w.rng.uniform(0, 60),
        }
        if p.get("clientRequestToken"):
            c["clientRequestToken"] = p["clientRequestToken"]
        c["_creator"] = p.get("_caller")
        self.table("clusters")[name] = c
        if access.get("bootstrapClusterCreatorAdminPermissions") and \
                access["authenticationMode"] != "CONFIG_MAP":
            self.bootstrap_admin(name, p.get("_caller"))
        self.w.record("eks", "CreateCluster", name, p.get("clientRequestToken"),
                      version=c["version"])
        note("eks_create", managed=MANAGED_TAG in c["tags"])
        return {"cluster": c}

    def describe_cluster(self, p: dict[str, Any]) -> dict[str, Any]:
        c = dict(self.cluster(p["name"]))
        if c["status"] in ("ACTIVE", "UPDATING"):  # each cluster its own API server and CA
            c["endpoint"], ca_data = self.w.kube.access(c["name"])
            c["certificateAuthority"] = {"data": ca_data}
        return {"cluster": c}

    def serving_clusters(self) -> list[str]:
        """EKS clusters whose Kubernetes API is up (restored after a sandbox restart)."""
        return [n for n, c in self.table("clusters").items()
                if c["status"] in ("ACTIVE", "UPDATING")]

    def list_clusters(self, p: dict[str, Any]) -> dict[str, Any]:
        names = sorted(self.table("clusters"))
        page, nxt = paginate(names, p, "maxResults", "nextToken")
        return {"clusters": page, **({"nextToken": nxt} if nxt else {})}

    def delete_cluster(self, p: dict[str, Any]) -> dict[str, Any]:
        c = self.cluster(p["name"])
        if c["status"] in ("CREATING", "UPDATING"):
            raise eks_in_use(f"Cluster {c['name']} is {c['status']}; it cannot be deleted now.")
        if c["status"] != "DELETING":
            c["status"] = "DELETING"
            c["_delete_at"] = self.w.now() + DELETE_SECONDS
            self.w.record("eks", "DeleteCluster", c["name"])
        return {"cluster": c}

    def update_cluster_config(self, p: dict[str, Any]) -> dict[str, Any]:
        c = self.active_cluster(p["name"])
        changes: dict[str, Any] = {k: p[k] for k in CONFIG_FIELDS if k in p}
        if not changes:
            raise eks_invalid_request("No changes needed")
        kind = _update_type(changes)
        if "accessConfig" in changes:
            self._check_auth_mode_change(c, changes["accessConfig"])
        update = self._new_update(c, kind, changes, p.get("clientRequestToken"))
        for key, value in changes.items():
            c[key] = {**c.get(key, {}), **value} if isinstance(value, dict) else value
        c["accessConfig"] = {"authenticationMode": c["accessConfig"]["authenticationMode"]}
        self.w.record("eks", "UpdateClusterConfig", c["name"], p.get("clientRequestToken"),
                      type=kind)
        return {"update": update}

    def update_cluster_version(self, p: dict[str, Any]) -> dict[str, Any]:
        c = self.active_cluster(p["name"])
        major, minor = c["version"].split(".")
        if p["version"] != f"{major}.{int(minor) + 1}" or p["version"] not in K8S_VERSIONS:
            raise eks_invalid_param(f"Unsupported Kubernetes minor version update from "
                                    f"{c['version']} to {p['version']}")
        update = self._new_update(c, "VersionUpdate", {"version": p["version"]},
                                  p.get("clientRequestToken"))
        c["_pending_version"] = p["version"]
        self.w.record("eks", "UpdateClusterVersion", c["name"], p.get("clientRequestToken"),
                      version=p["version"])
        return {"update": update}

    def describe_cluster_versions(self, p: dict[str, Any]) -> dict[str, Any]:
        versions = [_version_info(v, i, len(K8S_VERSIONS)) for i, v in enumerate(K8S_VERSIONS)]
        if p.get("clusterVersions"):
            versions = [v for v in versions if v["clusterVersion"] in p["clusterVersions"]]
        if p.get("defaultOnly"):
            versions = [v for v in versions if v["defaultVersion"]]
        page, nxt = paginate(versions, p, "maxResults", "nextToken")
        return {"clusterVersions": page, **({"nextToken": nxt} if nxt else {})}

    def describe_update(self, p: dict[str, Any]) -> dict[str, Any]:
        self.cluster(p["name"])
        updates = self.table("updates").get(p["name"], {})
        if p.get("addonName"):
            updates = self.table("addon_updates").get(f"{p['name']}/{p['addonName']}", {})
        if p["updateId"] not in updates:
            raise eks_not_found(f"No update found for ID: {p['updateId']}")
        return {"update": updates[p["updateId"]]}

    def list_updates(self, p: dict[str, Any]) -> dict[str, Any]:
        self.cluster(p["name"])
        ids = list(self.table("updates").get(p["name"], {}))
        page, nxt = paginate(ids, p, "maxResults", "nextToken")
        return {"updateIds": page, **({"nextToken": nxt} if nxt else {})}

    def tag_resource(self, p: dict[str, Any]) -> dict[str, Any]:
        self._by_arn(p["resourceArn"]).setdefault("tags", {}).update(p["tags"])
        self.w.record("eks", "TagResource", p["resourceArn"])
        return {}

    def untag_resource(self, p: dict[str, Any]) -> dict[str, Any]:
        tags = self._by_arn(p["resourceArn"]).setdefault("tags", {})
        for key in p.get("tagKeys", []):
            tags.pop(key, None)
        self.w.record("eks", "UntagResource", p["resourceArn"])
        return {}

    def list_tags_for_resource(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"tags": self._by_arn(p["resourceArn"]).get("tags", {})}

    # internals -------------------------------------------------------------------------
    def _by_arn(self, arn: str) -> dict[str, Any]:
        for c in self.table("clusters").values():
            if c["arn"] == arn:
                return cast("dict[str, Any]", c)
        raise AwsError("NotFoundException", f"Resource {arn} not found", 404)

    def _check_subnets(self, subnet_ids: list[str]) -> None:
        """EKS wants subnets in at least two AZs (checked when the subnets are known)."""
        azs = [self.w.subnet_azs(s) if self.w.subnet_azs else None for s in subnet_ids]
        if subnet_ids and all(azs) and len(set(azs)) < 2:
            raise eks_invalid_param("Subnets specified must be in at least two different AZs")

    def _check_auth_mode_change(self, c: dict[str, Any], access: dict[str, Any]) -> None:
        order = ["CONFIG_MAP", "API_AND_CONFIG_MAP", "API"]
        new = access.get("authenticationMode")
        old = c["accessConfig"]["authenticationMode"]
        if new and order.index(new) < order.index(old):
            raise eks_invalid_param(f"Unsupported authentication mode update from {old} to {new}")

    def _new_update(self, c: dict[str, Any], kind: str, changes: dict[str, Any],
                    token: str | None) -> dict[str, Any]:
        now = self.w.now()
        update = {"id": str(uuid.UUID(int=self.w.rng.getrandbits(128))), "status": "InProgress",
                  "type": kind, "params": _update_params(changes), "createdAt": now,
                  "errors": [], "_done_at": now + UPDATE_SECONDS}
        self.table("updates").setdefault(c["name"], {})[update["id"]] = update
        c["status"] = "UPDATING"
        return update

    def tick(self, now: float) -> None:
        super().tick(now)
        clusters = self.table("clusters")
        for name, c in list(clusters.items()):
            if c["status"] == "CREATING" and now >= c["_ready_at"]:
                c["status"] = "ACTIVE"
                self.w.kube.cluster_active(name)
            elif c["status"] == "DELETING" and now >= c["_delete_at"]:
                del clusters[name]
                self.w.kube.cluster_deleted(name)
                for table in ("updates", "addons", "access", "pod_identity"):
                    self.table(table).pop(name, None)
            elif c["status"] == "UPDATING":
                self._finish_updates(c, now)

    def _finish_updates(self, c: dict[str, Any], now: float) -> None:
        pending = [u for u in self.table("updates").get(c["name"], {}).values()
                   if u["status"] == "InProgress"]
        for u in pending:
            if now >= u["_done_at"]:
                u["status"] = "Successful"
                if u["type"] == "VersionUpdate" and c.get("_pending_version"):
                    c["version"] = c.pop("_pending_version")
        if all(u["status"] != "InProgress" for u in pending):
            c["status"] = "ACTIVE"


def _version_info(version: str, index: int, count: int) -> dict[str, Any]:
    """Newest last; the oldest is in extended support, the newest but one is the default."""
    released = 1_700_000_000.0 + index * 120 * 86400
    extended = index == 0
    return {"clusterVersion": version, "clusterType": "eks", "defaultPlatformVersion": "eks.1",
            "defaultVersion": version == DEFAULT_VERSION, "releaseDate": released,
            "endOfStandardSupportDate": released + 425 * 86400,
            "endOfExtendedSupportDate": released + 790 * 86400,
            "status": "extended-support" if extended else "standard-support",
            "versionStatus": "EXTENDED_SUPPORT" if extended else "STANDARD_SUPPORT",
            "kubernetesPatchVersion": f"{version}.{count - index}"}


def _same_token(resource: dict[str, Any], p: dict[str, Any]) -> bool:
    token = p.get("clientRequestToken")
    return bool(token) and resource.get("_token", resource.get("clientRequestToken")) == token


def _update_type(changes: dict[str, Any]) -> str:
    if "accessConfig" in changes:
        return "AccessConfigUpdate"
    if "logging" in changes:
        return "LoggingUpdate"
    if "resourcesVpcConfig" in changes:
        return "EndpointAccessUpdate"
    if "upgradePolicy" in changes:
        return "UpgradePolicyUpdate"
    return "ConfigUpdate"


def _update_params(changes: dict[str, Any]) -> list[dict[str, str]]:
    out = []
    for key, value in changes.items():
        if isinstance(value, dict):
            for k, v in value.items():
                text = json.dumps(v) if isinstance(v, (list, dict)) else str(v)
                out.append({"type": _PARAM_TYPES.get(k, k[0].upper() + k[1:]), "value": text})
        else:
            out.append({"type": key[0].upper() + key[1:], "value": str(value)})
    return out


_PARAM_TYPES = {"authenticationMode": "AuthenticationMode", "endpointPublicAccess":
                "EndpointPublicAccess", "endpointPrivateAccess": "EndpointPrivateAccess",
                "publicAccessCidrs": "PublicAccessCidrs", "clusterLogging": "ClusterLogging",
                "supportType": "UpgradePolicy", "subnetIds": "Subnets",
                "securityGroupIds": "SecurityGroups", "zonalShiftConfig": "ZonalShiftConfig",
                "version": "Version"}
