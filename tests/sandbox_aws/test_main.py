"""The sandbox process entry: the Kubernetes API factory hook and the env file."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import boto3
import httpx

from podplane_sandbox.clock import VirtualClock
from podplane_sandbox.contracts import NodeSource
from podplane_sandbox.main import Sandbox
from tests.sandbox_aws.iam_setup import make_role

ROLE = "arn:aws:iam::123456789012:role/eks"


class FakeKube:
    def __init__(self, calls: list[Any], state_dir: Path, port: int, cluster: str) -> None:
        self.calls, self.cluster_name = calls, cluster
        self.endpoint = f"https://127.0.0.1:{port}"
        self.ca_pem = f"CA of {cluster}".encode()
        self.state_dir = state_dir
        self.started = asyncio.Event()

    async def start(self) -> None:
        self.calls.append(("start", self.cluster_name))
        self.started.set()

    async def stop(self) -> None:
        self.calls.append(("stop", self.cluster_name))

    async def settle(self) -> None:
        return None

    def kubeconfig_parts(self) -> tuple[dict[str, Any], ...]:
        return ({"name": self.cluster_name, "cluster": {"server": self.endpoint}},
                {"name": self.cluster_name, "user": {}},
                {"name": self.cluster_name, "context": {"cluster": self.cluster_name}})


async def test_each_active_eks_cluster_gets_its_own_kubernetes_api(tmp_path: Path) -> None:
    calls: list[Any] = []
    made: list[FakeKube] = []

    def factory(state_dir: Path, clock: VirtualClock, nodes: NodeSource, host: str, port: int,
                **kw: Any) -> FakeKube:
        assert clock is box.clock and nodes is box.node_source and host == "127.0.0.1"
        made.append(FakeKube(calls, state_dir, 16443 + len(made), kw["eks_cluster_name"]))
        return made[-1]

    box = Sandbox(tmp_path, aws_port=0, kube_port=16443, speed=0, kube_factory=factory)
    stop = asyncio.Event()
    task = asyncio.create_task(box.serve(stop))
    while box.aws_port == 0:
        await asyncio.sleep(0.01)
    eks = boto3.client("eks", endpoint_url=box.aws_url, region_name="us-west-2",
                       aws_access_key_id="test", aws_secret_access_key="test")
    iam = boto3.client("iam", endpoint_url=box.aws_url, region_name="us-west-2",
                       aws_access_key_id="test", aws_secret_access_key="test")
    await asyncio.to_thread(make_role, lambda _: iam, "eks", ("eks.amazonaws.com",))
    async with httpx.AsyncClient() as client:  # past IAM's propagation (lag mode)
        await client.post(f"{box.aws_url}/_sandbox/clock/advance", json={"seconds": 30},
                          headers=box.control_headers)
    for name in ("a", "b"):
        await asyncio.to_thread(eks.create_cluster, name=name, roleArn=ROLE,
                                resourcesVpcConfig={"subnetIds": []})
    assert made == []  # no API server before ACTIVE, as EKS shows no endpoint
    async with httpx.AsyncClient() as client:
        await client.post(f"{box.aws_url}/_sandbox/clock/advance", json={"seconds": 700},
                          headers=box.control_headers)
    described = {n: (await asyncio.to_thread(eks.describe_cluster, name=n))["cluster"]
                 for n in ("a", "b")}
    assert {d["endpoint"] for d in described.values()} == {"https://127.0.0.1:16443",
                                                           "https://127.0.0.1:16444"}
    assert described["a"]["certificateAuthority"]["data"] != \
        described["b"]["certificateAuthority"]["data"]
    assert {m.state_dir for m in made} == {tmp_path / "sandbox" / "kube" / n for n in "ab"}
    for m in made:
        await m.started.wait()
    stop.set()
    await task
    assert sorted(c for c in calls if c[0] == "stop") == [("stop", "a"), ("stop", "b")]
    env = (tmp_path / "sandbox" / "env").read_text()
    assert f"export AWS_ENDPOINT_URL={box.aws_url}" in env
    assert "export AWS_DEFAULT_REGION=us-west-2" in env
    assert (tmp_path / "sandbox" / "aws-state.json").exists()
