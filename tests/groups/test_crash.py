"""Kill -9 right after the UpdateCluster call, restart the control plane: the add finishes
with exactly one UpdateCluster (the resumed step inspects instead of sending it again).

The control plane runs as `python -m podplane serve`; the sandbox runs in this process and
is sped up so the paced engine clock needs little real time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest

from podplane.domain.effects import Role
from podplane.server import local_ctx
from podplane.services.access import tokens
from podplane.settings import Settings
from podplane.store import clusters as cluster_rows
from tests.groups.conftest import CLUSTER, _create, _network
from tests.served import ControlPlane
from tests.stack import SandboxThread


class Cloud:
    """The bits of the stack helpers that need only the sandbox."""

    def __init__(self, sandbox: SandboxThread) -> None:
        self.sandbox = sandbox
        self.url = sandbox.box.aws_url

    def aws(self, service: str) -> Any:
        return boto3.client(service, endpoint_url=self.url, region_name="us-west-2",
                            aws_access_key_id="test", aws_secret_access_key="test")

    def advance(self, seconds: float) -> None:
        httpx.post(f"{self.url}/_sandbox/clock/advance", json={"seconds": seconds},
                   headers=self.sandbox.box.control_headers)

    def ledger(self, **query: str) -> list[dict[str, Any]]:
        return list(httpx.get(f"{self.url}/_sandbox/ledger", params=query,
                              headers=self.sandbox.box.control_headers).json())


@pytest.fixture
def cloud(tmp_path: Path) -> Iterator[Cloud]:
    sandbox = SandboxThread(tmp_path / "cloud")
    try:
        yield Cloud(sandbox)
    finally:
        sandbox.stop()


def _register(settings: Settings, vpc: str) -> str:
    async def go() -> str:
        async with local_ctx(settings) as ctx:
            async with ctx.app.sessions.begin() as db:
                await cluster_rows.upsert(
                    db, CLUSTER, region="us-west-2", eks_cluster_name=CLUSTER,
                    hyperpod_cluster_name=CLUSTER, origin="imported", state="active", spec={},
                    facts={"network": {"vpc_id": vpc}})
            return (await tokens.mint(ctx, "crash-admin", Role.ADMIN)).secret

    return asyncio.run(go())


def _control_plane(home: Path, db_url: str, cloud: Cloud) -> ControlPlane:
    return ControlPlane(home, {"PODPLANE_DATABASE_URL": db_url, "AWS_ENDPOINT_URL": cloud.url,
                               "PODPLANE_BACKEND": "sandbox",
                               "PODPLANE_SANDBOX_SECRET": cloud.sandbox.box.secret})


@pytest.mark.slow
def test_add_resumes_after_a_crash_with_exactly_one_update_cluster(
    cloud: Cloud, tmp_path: Path
) -> None:
    vpc, compute, private, sg = _network(cloud)  # type: ignore[arg-type]
    _create(cloud, compute, private, sg)  # type: ignore[arg-type]
    home, db_url = tmp_path / "cp", f"sqlite:///{tmp_path / 'cp.db'}"
    home.mkdir()
    token = _register(Settings(home=home, database_url=db_url), vpc)
    httpx.put(f"{cloud.url}/_sandbox/clock/speed", json={"speed": 1200},
              headers=cloud.sandbox.box.control_headers).raise_for_status()
    headers = {"Authorization": f"Bearer {token}"}

    cp = _control_plane(home, db_url, cloud)
    cp.start("update-cluster:after_call")
    try:
        r = httpx.post(f"{cp.url}/api/v1/clusters/{CLUSTER}/instance-groups", headers=headers,
                       json={"name": "after-crash", "instance_type": "ml.m5.xlarge",
                             "count": 1})
        assert r.status_code == 202, r.text
        op_id = r.json()["id"]
        assert cp.killed(timeout=60) != 0  # killed itself right after the call
    finally:
        cp.stop()
    assert len(cloud.ledger(service="sagemaker", action="UpdateCluster")) == 1

    cp.start()
    try:
        op: dict[str, Any] = {}
        for _ in range(30):
            op = httpx.get(f"{cp.url}/api/v1/operations/{op_id}/wait", params={"timeout": 10},
                           headers=headers, timeout=30).json()
            if op["status"] in ("succeeded", "failed"):
                break
    finally:
        cp.stop()
    assert op["status"] == "succeeded", op
    (update,) = cloud.ledger(service="sagemaker", action="UpdateCluster")
    assert update["params"]["added"] == ["after-crash"]
    step = next(s for s in op["steps"] if s["name"] == "update-cluster")
    assert any(e["phase"] == "submitted" for e in step["history"])
