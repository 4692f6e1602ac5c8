"""Growing the FSx for Lustre feature's file system, read back as FSx and Kubernetes show it.

One stack for the module, on virtual time, in order: enable at 2400 GiB; a decrease and a
throughput change are refused (409) and change nothing; an increase to 7200 GiB is one
UpdateFileSystem, its operation notes FSx's progress (adding storage, then storage
optimization percent from DescribeFileSystems AdministrativeActions) and finishes only when the
FILE_SYSTEM_UPDATE is COMPLETED; the PV then offers 7200Gi while the claim keeps its request
and stays Bound; the same request again changes nothing; a file system given by id is never
resized, whatever capacity_gib says.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from podplane.domain.features import fsx
from podplane.services.cloud_access import cloud_of
from podplane.services.clusters.state import save_facts
from podplane.store import clusters as cluster_rows
from podplane_sandbox.aws.fsx import CREATE_SECONDS
from podplane_sandbox.aws.fsx_resize import SCALE_SECONDS, SPACING_SECONDS
from tests.features.conftest import BASE, BUCKET, mutations, same_again_changes_nothing
from tests.groups import conftest as groups
from tests.groups.conftest import CLUSTER, TERMINAL, Cluster, finish
from tests.stack import running_stack

IN_ORDER = pytest.mark.asyncio(loop_scope="module")
URL = f"{BASE}/fsx-lustre"
ON = {"enabled": True, "settings": {"capacity_gib": 2400, "throughput_per_tib": 250}}
BIGGER = {"enabled": True, "settings": {"capacity_gib": 7200}}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    async with running_stack(tmp_path_factory.mktemp("fsx-resize")) as stack:
        vpc, compute, private, sg = groups._network(stack)
        groups._create(stack, compute, private, sg)
        async with stack.app.state.podplane.sessions.begin() as db:
            await cluster_rows.upsert(
                db, CLUSTER, region="us-west-2", eks_cluster_name=CLUSTER,
                hyperpod_cluster_name=CLUSTER, origin="imported", state="active", spec={},
                facts={"network": {"vpc_id": vpc}})
        await save_facts(stack.app.state.podplane, CLUSTER, bucket=BUCKET)
        yield Cluster(stack, CLUSTER, vpc, compute, sg)


def _ours(cluster: Cluster) -> list[dict[str, Any]]:
    return [f for f in cluster.stack.aws("fsx").describe_file_systems()["FileSystems"]
            if fsx.ours(f, CLUSTER)]


async def _kube_get(cluster: Cluster, kind: str, name: str, ns: str | None = None
                    ) -> dict[str, Any]:
    kube = await cloud_of(cluster.stack.app.state.podplane).kube_for(CLUSTER)
    found = await kube.get("v1", kind, name, ns)
    assert found is not None
    return found


async def _finish_long(client: Any, op: dict[str, Any]) -> dict[str, Any]:
    """finish() for an operation of about half an hour of virtual time."""
    for _ in range(300):
        r = await client.get(f"/api/v1/operations/{op['id']}/wait", params={"timeout": 20})
        op = r.json()
        if op["status"] in TERMINAL:
            return dict(op)
    raise AssertionError(f"operation {op['id']} did not finish: {op['steps']}")


@IN_ORDER
async def test_enable_at_2400(cluster: Cluster) -> None:
    async with cluster.stack.client("operator") as client:
        r = await client.patch(URL, json=ON)
        assert r.status_code == 202, r.text
        assert (await finish(client, r.json()))["status"] == "succeeded"
    (fs,) = _ours(cluster)
    assert (fs["StorageCapacity"], fs["Lifecycle"]) == (2400, "AVAILABLE")


@IN_ORDER
async def test_a_decrease_or_a_throughput_change_is_refused_and_changes_nothing(
        cluster: Cluster) -> None:
    stack = cluster.stack
    count = len(stack.ledger())
    async with stack.client("operator") as client:
        for settings, words in (({"capacity_gib": 1200}, "cannot decrease"),
                                ({"throughput_per_tib": 500}, "throughput")):
            r = await client.patch(URL, json={"settings": settings})
            assert r.status_code == 409, r.text
            assert words in r.json()["detail"], r.json()
            plan = await client.post(f"{URL}/plan", json={"settings": settings})
            assert plan.status_code == 409, plan.text
        view = (await client.get(URL)).json()
    assert view["desired_settings"]["capacity_gib"] == 2400
    assert view["desired_settings"]["throughput_per_tib"] == 250
    assert len(stack.ledger()) == count
    (fs,) = _ours(cluster)
    assert fs["StorageCapacity"] == 2400 and not fs.get("AdministrativeActions")


@IN_ORDER
async def test_an_increase_follows_fsx_until_optimized(cluster: Cluster) -> None:
    stack = cluster.stack
    before = len(stack.ledger())
    async with stack.client("operator") as client:
        plan = (await client.post(f"{URL}/plan", json=BIGGER)).json()["plan"]
        assert [(a["verb"], a["kind"]) for a in plan["actions"]] == [
            ("update", "fsx-filesystem")]
        assert any("StorageCapacity: want 7200, found 2400" in d
                   for a in plan["actions"] for d in a["differences"]), plan
        r = await client.patch(URL, json=BIGGER)
        assert r.status_code == 202, r.text
        done = await _finish_long(client, r.json())
        assert done["status"] == "succeeded", done
        history = str(done["steps"])
        await same_again_changes_nothing(client, cluster, URL, BIGGER)
        view = (await client.get(URL)).json()
    assert "adding storage" in history and "storage optimization" in history, history
    assert "resized to 7200 GiB" in history
    assert mutations(stack.ledger()[before:]) == ["fsx:UpdateFileSystem"]
    (fs,) = _ours(cluster)
    assert (fs["StorageCapacity"], fs["Lifecycle"]) == (7200, "AVAILABLE")
    actions = {a["AdministrativeActionType"]: a for a in fs["AdministrativeActions"]}
    assert actions["FILE_SYSTEM_UPDATE"]["Status"] == "COMPLETED"
    assert actions["FILE_SYSTEM_UPDATE"]["TargetFileSystemValues"]["StorageCapacity"] == 7200
    assert (actions["STORAGE_OPTIMIZATION"]["Status"],
            actions["STORAGE_OPTIMIZATION"]["ProgressPercent"]) == ("COMPLETED", 100)
    pv = await _kube_get(cluster, "PersistentVolume", fsx.PV_NAME)
    assert pv["spec"]["capacity"]["storage"] == "7200Gi"
    claim = await _kube_get(cluster, "PersistentVolumeClaim", fsx.CLAIM, "default")
    assert claim["spec"]["resources"]["requests"]["storage"] == "2400Gi"
    assert claim["status"]["phase"] == "Bound"
    assert (view["observed_enabled"], view["drifted"]) == (True, False)


@IN_ORDER
async def test_a_resize_in_progress_is_followed_not_asked_again(cluster: Cluster) -> None:
    """An increase already running (here started out of band, as after a crash) shows as
    drift while FSx optimizes; the request for that capacity follows it to COMPLETED without a
    second UpdateFileSystem; another capacity meanwhile is refused (one update at a time)."""
    stack = cluster.stack
    stack.advance(SPACING_SECONDS)
    (fs,) = _ours(cluster)
    stack.aws("fsx").update_file_system(FileSystemId=fs["FileSystemId"], StorageCapacity=9600)
    stack.advance(SCALE_SECONDS + 1)   # the new capacity is there; optimizing has begun
    (fs,) = _ours(cluster)
    assert fs["StorageCapacity"] == 9600
    before = len(stack.ledger())
    async with stack.client("operator") as client:
        view = (await client.get(URL)).json()
        assert view["drifted"] is True and any("resizing to 9600" in d for d in view["drift"])
        other = await client.patch(URL, json={"settings": {"capacity_gib": 12000}})
        assert other.status_code == 409 and "one storage update at a time" in \
            other.json()["detail"], other.text
        r = await client.patch(URL, json={"settings": {"capacity_gib": 9600}})
        assert r.status_code == 202, r.text
        done = await _finish_long(client, r.json())
        assert done["status"] == "succeeded", done["steps"]
        await same_again_changes_nothing(client, cluster, URL, {"settings": {"capacity_gib": 9600}})
    assert mutations(stack.ledger()[before:]) == []   # PV capacity is Kubernetes, not ledger
    (fs,) = _ours(cluster)
    actions = {a["AdministrativeActionType"]: a for a in fs["AdministrativeActions"]}
    assert actions["FILE_SYSTEM_UPDATE"]["Status"] == "COMPLETED"
    pv = await _kube_get(cluster, "PersistentVolume", fsx.PV_NAME)
    assert pv["spec"]["capacity"]["storage"] == "9600Gi"


@IN_ORDER
async def test_an_existing_file_system_is_never_resized(cluster: Cluster) -> None:
    stack = cluster.stack
    async with stack.client("admin") as admin:  # the file system's data goes: a destroy
        off = await admin.patch(URL, json={"enabled": False, "confirm": True})
        assert (await finish(admin, off.json()))["status"] == "succeeded"
    async with stack.client("operator") as client:
        sg = cluster.security_group
        stack.aws("ec2").authorize_security_group_ingress(GroupId=sg, IpPermissions=[{
            "IpProtocol": "tcp", "FromPort": 988, "ToPort": 988, "UserIdGroupPairs": [
                {"GroupId": sg}]}])
        theirs = stack.aws("fsx").create_file_system(
            FileSystemType="LUSTRE", StorageCapacity=1200, SubnetIds=[cluster.compute_subnet],
            SecurityGroupIds=[sg], LustreConfiguration={"DeploymentType": "PERSISTENT_2",
                                                         "PerUnitStorageThroughput": 125},
            Tags=[{"Key": "team", "Value": "data"}])["FileSystem"]
        stack.advance(CREATE_SECONDS + 1)
        body = {"enabled": True, "settings": {"file_system_id": theirs["FileSystemId"],
                                              "capacity_gib": 9600}}
        r = await client.patch(URL, json=body)
        assert r.status_code == 202, r.text
        assert "fsx-filesystem" not in [a["kind"] for a in r.json()["plan"]["actions"]]
        assert (await finish(client, r.json()))["status"] == "succeeded"
        await same_again_changes_nothing(client, cluster, URL, body)
    (still,) = [f for f in stack.aws("fsx").describe_file_systems()["FileSystems"]
                if f["FileSystemId"] == theirs["FileSystemId"]]
    assert still["StorageCapacity"] == 1200 and not still.get("AdministrativeActions")
    assert [e for e in stack.ledger(service="fsx", action="UpdateFileSystem")
            if e["target"] == theirs["FileSystemId"]] == []
