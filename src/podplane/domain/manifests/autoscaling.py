"""HyperPod-managed Karpenter objects: one HyperpodNodeClass and one NodePool per group.

HyperpodNodeClass has no public CRD; its fields are the SageMaker docs' (autoscaling node class
page; ../shared/crds/karpenter/HYPERPOD_NODECLASS.md): group `karpenter.sagemaker.amazonaws.com`,
`spec.instanceGroups`. The NodePool is karpenter.sh/v1 (kubernetes-sigs/karpenter
`pkg/apis/crds/karpenter.sh_nodepools.yaml`) as the docs' sample writes it: instance type
`Exists`, `expireAfter: Never`; empty nodes are consolidated so groups drain back to zero.
"""

from __future__ import annotations

from podplane.domain.manifests.common import Manifest

NODECLASS_GROUP = "karpenter.sagemaker.amazonaws.com"
NODECLASS_API = f"{NODECLASS_GROUP}/v1"


def pool_name(group: str) -> str:
    return f"podplane-{group}"


def node_class(group: str) -> Manifest:
    return {"apiVersion": NODECLASS_API, "kind": "HyperpodNodeClass",
            "metadata": {"name": pool_name(group)},
            "spec": {"instanceGroups": [group]}}


def node_pool(group: str) -> Manifest:
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
            "metadata": {"name": pool_name(group)},
            "spec": {"template": {"spec": {
                "nodeClassRef": {"group": NODECLASS_GROUP, "kind": "HyperpodNodeClass",
                                 "name": pool_name(group)},
                "expireAfter": "Never",
                "requirements": [{"key": "node.kubernetes.io/instance-type",
                                  "operator": "Exists"}]}},
                "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "60s"}}}
