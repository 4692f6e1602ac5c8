"""Which EC2 instance a Kubernetes Node is, read from its providerID.

HyperPod Nodes carry `aws:///<az-id>/sagemaker/cluster/hyperpod-<clusterId>-<instanceId>`
(seen on live clusters; aws/amazon-vpc-cni-k8s parses the same shape in its HyperPod
integration tests), plain EKS nodes `aws:///<az>/<instanceId>`. Both end in the instance id,
so we match that suffix instead of splitting on `/`.
"""

from __future__ import annotations

import re

INSTANCE_ID = re.compile(r"(i-[0-9a-f]{8,17})$")
NODE_PREFIX = "hyperpod-"


def instance_id_of(provider_id: str, node_name: str = "") -> str | None:
    """The instance id from a providerID, else from a `hyperpod-i-…` node name, else None."""
    if provider_id.startswith("aws://"):
        found = INSTANCE_ID.search(provider_id)
        if found:
            return found.group(1)
    found = INSTANCE_ID.search(node_name)
    if found and node_name == NODE_PREFIX + found.group(1):
        return found.group(1)
    return None
