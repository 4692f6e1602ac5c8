"""EKS add-ons: CREATING -> ACTIVE when the cluster can run them (addon_health.py), else
CREATING -> DEGRADED or CREATE_FAILED with EKS's health issue; the addon_failure fault too."""

from __future__ import annotations

import json
import uuid
from typing import Any, cast

from podplane_sandbox.aws.amp_health import observability_issue
from podplane_sandbox.aws.base import paginate
from podplane_sandbox.aws.eks import inference_addon
from podplane_sandbox.aws.eks.addon_health import (
    NO_FACTS,
    NO_NODES_DEGRADE_SECONDS,
    ClusterFacts,
    cluster_facts,
    nodes_issue,
    permission_issue,
    prerequisite_failure,
    replicas_issue,
)
from podplane_sandbox.aws.eks.addon_identity import AddonIdentityMixin
from podplane_sandbox.aws.eks.catalog import ADDONS, addon_info, default_version
from podplane_sandbox.aws.errors import eks_in_use, eks_invalid_param, eks_not_found
from podplane_sandbox.contracts import SandboxAddon

ADDON_SECONDS = 120.0
POD_IDENTITY_POLICIES = {
    "vpc-cni": ("aws-node", "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy"),
    "aws-ebs-csi-driver": ("ebs-csi-controller-sa",
                           "arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy"),
}


class AddonsMixin(AddonIdentityMixin):
    def describe_addon_versions(self, p: dict[str, Any]) -> dict[str, Any]:
        names = [p["addonName"]] if p.get("addonName") else sorted(ADDONS)
        infos = [addon_info(n, p.get("kubernetesVersion")) for n in names if n in ADDONS]
        if p.get("types"):
            infos = [i for i in infos if i["type"] in p["types"]]
        page, nxt = paginate(infos, p, "maxResults", "nextToken")
        return {"addons": page, **({"nextToken": nxt} if nxt else {})}

    def describe_addon_configuration(self, p: dict[str, Any]) -> dict[str, Any]:
        name, version = p["addonName"], p["addonVersion"]
        if name not in ADDONS or version not in ADDONS[name][1]:
            raise eks_not_found(f"Addon {name} version {version} not found")
        schema = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                  "additionalProperties": True,
                  "properties": {"resources": {"type": "object"},
                                 "tolerations": {"type": "array"},
                                 "nodeSelector": {"type": "object"}}}
        out: dict[str, Any] = {"addonName": name, "addonVersion": version,
                               "configurationSchema": json.dumps(schema)}
        if name in POD_IDENTITY_POLICIES:
            out["podIdentityConfiguration"] = [{
                "serviceAccount": POD_IDENTITY_POLICIES[name][0],
                "recommendedManagedPolicies": [POD_IDENTITY_POLICIES[name][1]]}]
        return out

    def _addons(self, cluster: str) -> dict[str, Any]:
        return cast("dict[str, Any]", self.table("addons").setdefault(cluster, {}))

    def _addon(self, cluster: str, name: str) -> dict[str, Any]:
        self.cluster(cluster)
        addon = self._addons(cluster).get(name)
        if addon is None:
            raise eks_not_found(f"No addon: {name} found in cluster: {cluster}")
        return cast("dict[str, Any]", addon)

    def create_addon(self, p: dict[str, Any]) -> dict[str, Any]:
        c = self.cluster(p["clusterName"])
        name = p["addonName"]
        if name not in ADDONS:
            raise eks_invalid_param(f"Addon {name} specified is not supported")
        version = p.get("addonVersion") or default_version(name)
        if version not in ADDONS[name][1]:
            raise eks_invalid_param(f"Addon version specified {version} is not supported")
        existing = self._addons(c["name"]).get(name)
        if existing is not None:
            if p.get("clientRequestToken") and existing.get("_token") == p["clientRequestToken"]:
                return {"addon": existing}  # an idempotent retry
            raise eks_in_use(f"Addon already exists: {name}")
        self._check_identity_request(name, p.get("podIdentityAssociations") or [], c["name"])
        now = self.w.now()
        failed = self.w.faults.fire("addon_failure", addon_name=name, cluster=c["name"])
        addon = {"addonName": name, "clusterName": c["name"], "status": "CREATING",
                 "addonVersion": version, "health": {"issues": []},
                 "addonArn": self.w.arn("eks", f"addon/{c['name']}/{name}/{self.w.hex_id(8)}"),
                 "createdAt": now, "modifiedAt": now, "tags": p.get("tags", {}),
                 "_done_at": now + ADDON_SECONDS, "_fail": bool(failed),
                 "_token": p.get("clientRequestToken")}
        for key in ("serviceAccountRoleArn", "configurationValues"):
            if key in p:
                addon[key] = p[key]
        if p.get("podIdentityAssociations"):
            addon["podIdentityAssociations"] = self._associate_for_addon(
                c["name"], addon["addonArn"], p["podIdentityAssociations"])
        self._addons(c["name"])[name] = addon
        self._admission_facts(addon)
        self.w.record("eks", "CreateAddon", f"{c['name']}/{name}", p.get("clientRequestToken"),
                      version=version)
        return {"addon": addon}

    def describe_addon(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"addon": self._addon(p["clusterName"], p["addonName"])}

    def list_addons(self, p: dict[str, Any]) -> dict[str, Any]:
        self.cluster(p["clusterName"])
        names = sorted(self._addons(p["clusterName"]))
        page, nxt = paginate(names, p, "maxResults", "nextToken")
        return {"addons": page, **({"nextToken": nxt} if nxt else {})}

    def update_addon(self, p: dict[str, Any]) -> dict[str, Any]:
        addon = self._addon(p["clusterName"], p["addonName"])
        if addon["status"] in ("CREATING", "UPDATING", "DELETING"):
            raise eks_in_use(f"Addon {addon['addonName']} is {addon['status']}")
        version = p.get("addonVersion") or addon["addonVersion"]
        if version not in ADDONS[addon["addonName"]][1]:
            raise eks_invalid_param(f"Addon version specified {version} is not supported")
        now = self.w.now()
        params = []
        for key, ptype in (("addonVersion", "AddonVersion"), ("configurationValues",
                           "ConfigurationValues"), ("serviceAccountRoleArn",
                           "ServiceAccountRoleArn"), ("resolveConflicts", "ResolveConflicts")):
            if key in p:
                params.append({"type": ptype, "value": str(p[key])})
                if key != "resolveConflicts":
                    addon[key] = p[key]
        failed = self.w.faults.fire("addon_failure", addon_name=addon["addonName"],
                                    cluster=addon["clusterName"])
        addon.update(status="UPDATING", modifiedAt=now, _done_at=now + ADDON_SECONDS,
                     _fail=bool(failed), _faulted=False)
        self._admission_facts(addon)
        update = {"id": str(uuid.UUID(int=self.w.rng.getrandbits(128))), "status": "InProgress",
                  "type": "AddonUpdate", "params": params, "createdAt": now, "errors": []}
        key = f"{addon['clusterName']}/{addon['addonName']}"
        self.table("addon_updates").setdefault(key, {})[update["id"]] = update
        self.w.record("eks", "UpdateAddon", key, p.get("clientRequestToken"), version=version)
        return {"update": update}

    def delete_addon(self, p: dict[str, Any]) -> dict[str, Any]:
        addon = self._addon(p["clusterName"], p["addonName"])
        if addon["status"] != "DELETING":
            addon.update(status="DELETING", _done_at=self.w.now() + ADDON_SECONDS / 2)
            self.w.record("eks", "DeleteAddon", f"{addon['clusterName']}/{addon['addonName']}")
        return {"addon": addon}

    def sandbox_addons(self, eks_cluster_name: str | None = None) -> list[SandboxAddon]:
        """The add-ons EKS has applied to a cluster's Kubernetes (every state but DELETING)."""
        self.w.tick()
        out = []
        with self.w.lock:
            for cluster, addons in self.table("addons").items():
                if eks_cluster_name in (None, cluster):
                    out += [SandboxAddon(cluster, a["addonName"], a["addonVersion"], a["status"])
                            for a in addons.values()]
        return out

    def tick(self, now: float) -> None:
        super().tick(now)
        if not getattr(self, "_addon_ticker", False):
            # add-on health reads node state: run after every other emulator (HyperPod) has
            # applied this tick's transitions, so a node that is Running now counts now
            self._addon_ticker = True
            self.w.on_tick(self._tick_addons)

    def _tick_addons(self, now: float) -> None:
        for cluster, addons in self.table("addons").items():
            facts = cluster_facts(self.w.state, self.s, cluster)
            for name, addon in list(addons.items()):
                if addon["status"] in ("ACTIVE", "DEGRADED") and not addon.get("_faulted"):
                    self._recheck(addon, facts)
                elif now >= addon.get("_done_at", now + 1):
                    self._settle_addon(cluster, addons, name, addon, facts, now)

    def _settle_addon(self, cluster: str, addons: dict[str, Any], name: str,
                      addon: dict[str, Any], facts: ClusterFacts, now: float) -> None:
        status = addon["status"]
        if status == "DELETING":
            del addons[name]
            self._drop_owned_associations(cluster, addon["addonArn"])
            return
        if addon.pop("_fail", False):
            addon["_faulted"] = True
            self._set(addon, "CREATE_FAILED" if status == "CREATING" else "DEGRADED",
                      replicas_issue(f"{name}-controller"))
        elif (failure := addon.pop("_prereq", None)) is not None:
            self._set(addon, "CREATE_FAILED" if status == "CREATING" else "DEGRADED", failure)
        elif (nodes := nodes_issue(name, facts)) is not None:
            if status == "CREATING" and now < addon["createdAt"] + NO_NODES_DEGRADE_SECONDS:
                return  # EKS keeps waiting for the replicas; re-checked on every tick
            self._set(addon, "DEGRADED", nodes)
        else:
            self._recheck(addon, facts)
        addon.pop("_done_at", None)
        for update in self.table("addon_updates").get(f"{cluster}/{name}", {}).values():
            if update["status"] == "InProgress":
                update["status"] = "Successful" if addon["status"] == "ACTIVE" else "Failed"

    def _admission_facts(self, addon: dict[str, Any]) -> None:
        """What holds when EKS applies the add-on's manifests (right after Create/UpdateAddon):
        cert-manager's CRDs must exist for the operator's Certificate, and its pods are admitted
        now, so only an association that exists now gives them credentials (Pod Identity env is
        injected at admission); a later association leaves the add-on DEGRADED until updated."""
        facts = cluster_facts(self.w.state, self.s, addon["clusterName"])
        addon["_prereq"] = prerequisite_failure(addon["addonName"], facts)
        if addon["addonName"] == inference_addon.ADDON:
            addon["_prereq"] = inference_addon.install_failure(addon, facts)
        addon["_no_identity"] = permission_issue(addon["addonName"], facts) is not None

    def _recheck(self, addon: dict[str, Any], facts: ClusterFacts) -> None:
        """ACTIVE and DEGRADED follow the cluster: replicas come and go with Ready nodes."""
        name = addon["addonName"]
        problem = nodes_issue(name, facts)
        if problem is None and addon.get("_no_identity"):
            problem = permission_issue(name, NO_FACTS)  # sticky: see _settle_addon
        if problem is None and name == inference_addon.ADDON:
            problem = inference_addon.running_issue(addon, facts, self._issuer(addon))
        if problem is None:  # HyperPod observability: workspace, role, remote write
            problem = observability_issue(self.w, self.s, addon)
        if problem is None:
            self._set(addon, "ACTIVE", None)
        else:
            self._set(addon, "DEGRADED", problem)

    def _issuer(self, addon: dict[str, Any]) -> str:
        found = self.table("clusters").get(addon["clusterName"]) or {}
        return str(((found.get("identity") or {}).get("oidc") or {}).get("issuer", ""))

    @staticmethod
    def _set(addon: dict[str, Any], status: str, problem: dict[str, Any] | None) -> None:
        addon["status"] = status
        addon["health"] = {"issues": [problem] if problem else []}
