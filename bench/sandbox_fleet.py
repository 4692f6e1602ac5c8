"""A 1,000-node managed cluster in the sandbox, for the benches: the sandbox on a thread of the
bench process (tests/stack.SandboxThread), the VPC, roles and EKS cluster the group tests use
(tests/groups/conftest), then a HyperPod cluster of GROUPS x PER_GROUP nodes, their Kubernetes
Nodes, one GPU pod per node, and a `clusters` row for the control plane to find it."""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "src")]

from tests.groups.conftest import (  # noqa: E402
    CLUSTER,
    LIFECYCLE,
    ROLE,
    _identity,
    _network,
)
from tests.stack import SandboxThread, Stack  # noqa: E402

ITYPE = "ml.g5.8xlarge"  # one A10G per node (AWS: ml.g5 instance types)


@dataclass
class Fleet:
    sandbox: SandboxThread
    stack: Stack  # only its sandbox half (aws, advance, ledger)
    name: str
    facts: dict[str, Any]

    def reads(self) -> int:
        """Cloud reads the sandbox answered so far (its ledger counts every call)."""
        return len(self.stack.ledger())


def build(home: Path, groups: int = 10, per_group: int = 100) -> Fleet:
    t0 = time.perf_counter()
    sandbox = SandboxThread(home / "cloud")
    stack = Stack(sandbox, app=None)
    control = stack.control_headers
    count = groups * per_group
    for key, value in (("quotas", {"instance_type": ITYPE, "value": count}),
                       ("capacity", {"instance_type": ITYPE, "availability_zone": "us-west-2a",
                                     "count": count})):
        httpx.put(f"{stack.aws_url}/_sandbox/{key}", json=value,
                  headers=control, timeout=60).raise_for_status()  # a loaded box is slow
    vpc, compute, private, sg = _network(stack)
    _identity(stack)
    eks = stack.aws("eks").create_cluster(
        name=CLUSTER, roleArn="arn:aws:iam::123456789012:role/eks",
        resourcesVpcConfig={"subnetIds": private, "securityGroupIds": [sg]},
        accessConfig={"authenticationMode": "API_AND_CONFIG_MAP"})["cluster"]
    stack.advance(15 * 60)
    stack.aws("sagemaker").create_cluster(
        ClusterName=CLUSTER, Orchestrator={"Eks": {"ClusterArn": eks["arn"]}},
        VpcConfig={"SecurityGroupIds": [sg], "Subnets": [compute]}, NodeRecovery="Automatic",
        InstanceGroups=[{
            "InstanceGroupName": f"workers-{g}", "InstanceType": ITYPE,
            "InstanceCount": per_group, "LifeCycleConfig": LIFECYCLE, "ExecutionRole": ROLE,
            "ThreadsPerCore": 1} for g in range(groups)])
    stack.advance(30 * 60)
    sandbox.call(sandbox.kube.settle(), timeout=900)
    _gpu_pods(sandbox)
    print(f"# sandbox fleet: {count} nodes ready in {time.perf_counter() - t0:.0f} s",
          flush=True)
    return Fleet(sandbox, stack, CLUSTER, {"vpc_id": vpc})


def _gpu_pods(sandbox: SandboxThread) -> None:
    """One running pod asking for the node's GPU on every node (nodeName set, as a scheduler
    would bind it)."""
    api = sandbox.kube.get(CLUSTER)
    assert api is not None
    pods = api.registry.by_key("pods")
    assert pods is not None

    async def seed() -> None:  # on the sandbox's loop: its store is not thread-safe
        for i, node in enumerate(api.store.items("nodes")):
            api.store.create(pods, {
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": f"train-{i:04d}", "namespace": "default"},
                "spec": {"nodeName": node["metadata"]["name"], "containers": [{
                    "name": "main", "image": "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
                    "resources": {"requests": {"nvidia.com/gpu": "1"}}}]}}, "default")
        await api.settle()

    sandbox.call(seed(), timeout=600)


async def register(database_url: str, fleet: Fleet) -> None:
    """The `clusters` row an import would write (as tests/groups/conftest does)."""
    from podplane.store import clusters as rows
    from podplane.store.db import make_engine, make_sessionmaker, migrate

    migrate(database_url)
    engine = make_engine(database_url)
    async with make_sessionmaker(engine).begin() as db:
        await rows.upsert(db, fleet.name, region="us-west-2", eks_cluster_name=fleet.name,
                          hyperpod_cluster_name=fleet.name, origin="imported", state="active",
                          spec={}, facts=fleet.facts)
    await engine.dispose()


if __name__ == "__main__":
    import tempfile
    f = build(Path(tempfile.mkdtemp(prefix="fleet-")), int(sys.argv[1]) if len(sys.argv) > 1
              else 10, int(sys.argv[2]) if len(sys.argv) > 2 else 100)
    print(len(f.stack.aws("sagemaker").list_cluster_nodes(ClusterName=f.name)
              ["ClusterNodeSummaries"]), "nodes (first page)")
    asyncio.run(asyncio.sleep(0))
    f.sandbox.stop()
