"""What the Kubernetes side reads from the AWS side, in one object: HyperPod instances (nodes)
and EKS add-ons and Pod Identity associations, each keyed by EKS cluster name."""

from __future__ import annotations

from podplane.sandbox.contracts import AddonSource, NodeSource, SandboxAddon, SandboxNode


class KubeView:
    def __init__(self, nodes: NodeSource, addons: AddonSource) -> None:
        self.nodes, self.addons = nodes, addons

    def sandbox_nodes(self, eks_cluster_name: str | None = None) -> list[SandboxNode]:
        return self.nodes.sandbox_nodes(eks_cluster_name)

    def sandbox_addons(self, eks_cluster_name: str | None = None) -> list[SandboxAddon]:
        return self.addons.sandbox_addons(eks_cluster_name)

    def pod_identity_role(self, eks_cluster_name: str | None, namespace: str,
                          service_account: str) -> str | None:
        return self.addons.pod_identity_role(eks_cluster_name, namespace, service_account)
