"""cluster.import: connect to an existing EKS (+ HyperPod) cluster, detect its state, register it.

Nothing in the account changes; afterwards the cluster is managed like one podplane created
(origin "imported"), and deleting it only detaches it unless resources are explicitly deleted.
"""

from __future__ import annotations

from typing import Any

from podplane.domain.dependencies import CORE_UNITS
from podplane.domain.errors import CloudError, NotFound
from podplane.ops.context import StepContext
from podplane.ops.workflows import Workflow
from podplane.services.cloud_access import cloud_of, engine_cloud
from podplane.services.clusters import dependencies as cluster_deps
from podplane.services.clusters.access import ensure_access_entry, unauthorized
from podplane.services.context import AppState
from podplane.store import clusters as repo

KIND = "cluster.import"
# What an imported cluster may already run, found by CRD (operators) or DaemonSet name.
OPERATOR_CRDS = {
    "training-operator": "hyperpodpytorchjobs.sagemaker.amazonaws.com",
    "kuberay": "rayjobs.ray.io",
    "keda": "scaledobjects.keda.sh",
    "karpenter": "nodepools.karpenter.sh",
    "inference-operator": "inferenceendpointconfigs.inference.sagemaker.aws.amazon.com",
}


def declare(app: AppState) -> list[Workflow]:
    steps = ImportSteps(app)
    return [Workflow.of(KIND, ("connect", steps.connect), ("detect", steps.detect),
                        ("register", steps.register_row))]


class ImportSteps:
    def __init__(self, app: AppState) -> None:
        self.app = app

    async def connect(self, ctx: StepContext) -> dict[str, Any]:
        cloud = engine_cloud(self.app)
        eks_name = ctx.params["eks_cluster_name"]
        eks = await cloud.aws.eks.describe_cluster(eks_name)
        if eks is None:
            raise NotFound(f"EKS cluster {eks_name!r} does not exist in this account.",
                           hint="List account clusters with cluster_list.")
        if eks["status"] != "ACTIVE":
            raise CloudError(f"EKS cluster {eks_name!r} is {eks['status']}.",
                             code="cluster_not_ready", hint="Import it once it is ACTIVE.")
        access = await ensure_access_entry(cloud, eks_name)  # else Kubernetes answers 401
        await ctx.phase("access", **access)
        kube = await cloud.kube_for(eks_name)
        try:
            namespaces = [n["metadata"]["name"] for n in await kube.list("v1", "Namespace")]
        except CloudError as err:
            if err.code == "kube_unauthorized":
                raise unauthorized(eks_name, access["principal"], err) from err
            raise
        hp_name = ctx.params.get("hyperpod_cluster_name")
        hp = await cloud.aws.hyperpod.describe_cluster(hp_name) if hp_name else None
        if hp_name and hp is None:
            raise NotFound(f"HyperPod cluster {hp_name!r} does not exist in this account.")
        await ctx.phase("connected", namespaces=len(namespaces))
        return {"eks_status": eks["status"], "kubernetes_version": eks.get("version"), **access,
                "namespaces": len(namespaces),
                "hyperpod_status": hp.get("ClusterStatus") if hp else None}

    async def detect(self, ctx: StepContext) -> dict[str, Any]:
        detected = await detect_state(self.app, ctx.params["eks_cluster_name"],
                                      ctx.params.get("hyperpod_cluster_name"))
        await ctx.phase("detected")
        return {"detected": detected}

    async def register_row(self, ctx: StepContext) -> dict[str, Any]:
        p = ctx.params
        cloud = engine_cloud(self.app)
        detected = await detect_state(self.app, p["eks_cluster_name"],
                                      p.get("hyperpod_cluster_name"))
        async with self.app.sessions.begin() as db:
            await repo.upsert(db, p["name"], region=cloud.aws.region,
                              eks_cluster_name=p["eks_cluster_name"],
                              hyperpod_cluster_name=p.get("hyperpod_cluster_name"),
                              origin="imported", state="active", spec={},
                              facts={"detected": detected}, operation_id=ctx.op_id)
        return {"cluster": p["name"], "origin": "imported"}


async def detect_state(app: AppState, eks_name: str, hp_name: str | None) -> dict[str, Any]:
    cloud = cloud_of(app)
    observed = await cluster_deps.observe(cloud, eks_name)
    units = {u.name: ({"installed": True, "version": observed[u.name].version,
                       "healthy": observed[u.name].healthy} if u.name in observed
                      else {"installed": False}) for u in CORE_UNITS}
    kube = await cloud.kube_for(eks_name)
    crds = {c["metadata"]["name"] for c in
            await kube.list("apiextensions.k8s.io/v1", "CustomResourceDefinition")}
    operators = {name: crd in crds for name, crd in OPERATOR_CRDS.items()}
    hyperpod = None
    if hp_name:
        hp = await cloud.aws.hyperpod.describe_cluster(hp_name) or {}
        hyperpod = {"status": hp.get("ClusterStatus"), "node_recovery": hp.get("NodeRecovery"),
                    "instance_groups": [g["InstanceGroupName"]
                                        for g in hp.get("InstanceGroups", [])]}
    return {"dependencies": units, "operators": operators, "hyperpod": hyperpod}
