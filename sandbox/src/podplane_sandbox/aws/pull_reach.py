"""Image pulls need the network too (issue 19): `KubeView.pull_blocked` answers the sandbox
kubelet, for a Kubernetes Node and an image, with kubelet's error when the node's subnet cannot
reach the registry (ECR: `reachability` target `ecr`; any other registry: `public-registry`).

The Node is mapped to its HyperPod instance through the instance id at the end of its
providerID (`aws:///<az-id>/sagemaker/cluster/hyperpod-<id>-i-...`), then to the instance's
subnet and security groups (`node_network.instance_network`). Evaluated at every pull attempt,
so a route fixed later lets the next attempt succeed.
"""

from __future__ import annotations

import re
from typing import Any

from podplane_sandbox.aws.node_network import instance_network
from podplane_sandbox.aws.reachability import can_reach
from podplane_sandbox.aws.world import World

INSTANCE_ID = re.compile(r"(i-[0-9a-f]{8,17})$")
ECR_HOST = re.compile(r"^\d{12}\.dkr\.ecr\.[a-z0-9-]+\.amazonaws\.com$")


def pull_blocked(world: World, node: dict[str, Any], image: str) -> str | None:
    """kubelet's error text when `node` cannot reach `image`'s registry, else None."""
    where = _instance(world, str((node.get("spec") or {}).get("providerID", "")))
    if where is None:
        return None
    subnet, groups = where
    host = image.split("/", 1)[0] if "/" in image else "docker.io"
    if "." not in host and ":" not in host:
        host = "docker.io"
    ok, _ = can_reach(world, subnet, "ecr" if ECR_HOST.match(host) else "public-registry",
                      security_groups=groups)
    if ok:
        return None
    return (f'failed to pull and unpack image "{image}": failed to resolve reference '
            f'"{image}": failed to do request: Head "https://{host}/v2/": dial tcp: '
            "i/o timeout")


def s3_blocked(world: World, node: dict[str, Any]) -> str | None:
    """Mountpoint's error when `node` has no way to S3 (a gateway endpoint or a NAT path):
    the driver's S3 client cannot connect, so the mount fails and kubelet retries it."""
    where = _instance(world, str((node.get("spec") or {}).get("providerID", "")))
    if where is None:
        return None
    ok, why = can_reach(world, where[0], "s3", security_groups=where[1])
    if ok:
        return None
    return f"Failed to create mount process: S3 endpoint unreachable from the node ({why})"


def internet_blocked(world: World, node: dict[str, Any]) -> str | None:
    """Why `node` cannot reach a public internet host (the Hugging Face Hub): the same path a
    public registry needs (an internet gateway route, or a NAT gateway for a private subnet)."""
    where = _instance(world, str((node.get("spec") or {}).get("providerID", "")))
    if where is None:
        return None
    ok, why = can_reach(world, where[0], "public-registry", security_groups=where[1])
    return None if ok else f"dial tcp: i/o timeout; {why}"


def _instance(world: World, provider_id: str) -> tuple[str, list[str]] | None:
    m = INSTANCE_ID.search(provider_id)
    if not m:
        return None
    hyperpod = world.service_state("sagemaker")
    for name, nodes in hyperpod.get("nodes", {}).items():
        node = nodes.get(m.group(1))
        cluster = hyperpod.get("clusters", {}).get(name)
        if node is None or cluster is None:
            continue
        group = next((g for g in cluster["InstanceGroups"]
                      if g["InstanceGroupName"] == node["InstanceGroupName"]), {})
        found = instance_network(world, cluster, group, node["_az"])
        return (found[0], found[1]) if found else None
    return None
