"""FSx for Lustre storage as a feature, read back as FSx, EC2, EKS and Kubernetes show it.

One stack for the module, on virtual time; the tests run in order on one cluster:
a refused request changes nothing; enable -> the CSI driver add-on ACTIVE, a PERSISTENT_2 file
system AVAILABLE in the compute subnet, TCP 988 and 1018-1023 open in the node group, a PV
naming the file system and its claim Bound, and a pod mounting it Running; the same request
again -> changed false and no mutation; drift (the PV changed, the file system deleted) ->
drifted -> one request reconciles it; disable -> exactly what it made is gone (ledger and
objects before/after); an existing file system given by id is mounted, and survives disable.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import InvalidInput
from podplane.domain.features import catalog, fsx
from podplane.domain.features.render import ClusterFacts, resources
from podplane.services.cloud_access import cloud_of
from podplane.services.clusters.state import save_facts
from podplane.store import clusters as cluster_rows
from podplane_sandbox.aws.fsx import CREATE_SECONDS
from tests.features.conftest import BASE, BUCKET, addon_of, mutations, same_again_changes_nothing
from tests.groups import conftest as groups
from tests.groups.conftest import CLUSTER, Cluster, finish
from tests.stack import running_stack

IN_ORDER = pytest.mark.asyncio(loop_scope="module")  # one stack, one loop, for the module
URL = f"{BASE}/fsx-lustre"
ON = {"enabled": True, "settings": {"capacity_gib": 2400, "throughput_per_tib": 250}}
PORTS = {(988, 988), (1018, 1023)}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    async with running_stack(tmp_path_factory.mktemp("fsx")) as stack:
        vpc, compute, private, sg = groups._network(stack)
        groups._create(stack, compute, private, sg)
        async with stack.app.state.podplane.sessions.begin() as db:
            await cluster_rows.upsert(
                db, CLUSTER, region="us-west-2", eks_cluster_name=CLUSTER,
                hyperpod_cluster_name=CLUSTER, origin="imported", state="active", spec={},
                facts={"network": {"vpc_id": vpc}})
        await save_facts(stack.app.state.podplane, CLUSTER, bucket=BUCKET)
        yield Cluster(stack, CLUSTER, vpc, compute, sg)


async def _kube(cluster: Cluster) -> KubePort:
    return await cloud_of(cluster.stack.app.state.podplane).kube_for(CLUSTER)


def _systems(cluster: Cluster) -> list[dict[str, Any]]:
    return list(cluster.stack.aws("fsx").describe_file_systems()["FileSystems"])


def _ours(cluster: Cluster) -> list[dict[str, Any]]:
    return [f for f in _systems(cluster) if fsx.ours(f, CLUSTER)]


def _rules(cluster: Cluster) -> list[dict[str, Any]]:
    return list(cluster.stack.aws("ec2").describe_security_group_rules(Filters=[
        {"Name": "group-id", "Values": [cluster.security_group]}])["SecurityGroupRules"])


def _lustre_rules(cluster: Cluster) -> set[tuple[int, int, str | None, str | None]]:
    return {(r["FromPort"], r["ToPort"], (r.get("ReferencedGroupInfo") or {}).get("GroupId"),
             {t["Key"]: t["Value"] for t in r.get("Tags") or []}.get("podplane:feature"))
            for r in _rules(cluster) if not r["IsEgress"] and r["IpProtocol"] == "tcp"}


async def _objects(cluster: Cluster) -> dict[str, list[str]]:
    kube = await _kube(cluster)
    return {kind: sorted(o["metadata"]["name"] for o in await kube.list("v1", kind))
            for kind in ("PersistentVolume", "PersistentVolumeClaim")}


def _settle(cluster: Cluster, seconds: float = 30) -> None:
    cluster.stack.advance(seconds)
    cluster.stack.sandbox.call(cluster.stack.sandbox.kube.settle())


async def _set(client: Any, body: dict[str, Any]) -> dict[str, Any]:
    r = await client.patch(URL, json=body)
    assert r.status_code == 202, r.text
    done = await finish(client, r.json())
    assert done["status"] == "succeeded", done
    return dict(r.json())


async def _pod_phase(cluster: Cluster, name: str) -> tuple[str, list[str]]:
    """A pod mounting the claim, its phase once the kubelet tried, and its events' reasons."""
    kube = await _kube(cluster)
    await kube.apply({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": name, "namespace": "default"},
                      "spec": {"containers": [{"name": "c", "image": "busybox:1.36",
                                               "volumeMounts": [{"name": "shared",
                                                                 "mountPath": "/fsx"}]}],
                               "volumes": [{"name": "shared", "persistentVolumeClaim": {
                                   "claimName": fsx.CLAIM}}]}}, force=True)
    _settle(cluster)
    pod = await kube.get("v1", "Pod", name, "default")
    assert pod is not None
    events = await kube.list("v1", "Event", namespace="default",
                             fields={"involvedObject.name": name})
    return pod["status"]["phase"], [e.get("reason", "") for e in events]


@IN_ORDER
async def test_a_bad_setting_is_refused_naming_it_and_changes_nothing(cluster: Cluster
                                                                        ) -> None:
    stack = cluster.stack
    count = len(stack.ledger())
    async with stack.client("operator") as client:
        for settings, field in (({"capacity_gib": 3000}, "capacity_gib"),
                                ({"capacity_gib": 1000}, "capacity_gib"),
                                ({"throughput_per_tib": 200}, "throughput_per_tib"),
                                ({"file_system_id": "my-fs"}, "file_system_id"),
                                ({"file_system_id": "fs-0123456789abcdef0"}, "file_system_id")):
            r = await client.patch(URL, json={"enabled": True, "settings": settings})
            assert r.status_code == 422, r.text
            assert r.json()["field"] == field, r.json()
        view = (await client.get(URL)).json()
    assert (view["desired_enabled"], view["observed_enabled"]) == (False, False)
    assert len(stack.ledger()) == count and _systems(cluster) == []


@IN_ORDER
async def test_enable_makes_what_it_says(cluster: Cluster) -> None:
    stack = cluster.stack
    before = len(stack.ledger())
    async with stack.client("operator") as client:
        plan = (await client.post(f"{URL}/plan", json=ON)).json()["plan"]
        assert [a["kind"] for a in plan["actions"]] == [
            "eks-addon", "sg-ingress", "sg-ingress", "fsx-filesystem", "kube", "kube"]
        await _set(client, ON)
        view = (await client.get(URL)).json()
    assert (view["desired_enabled"], view["observed_enabled"], view["drifted"]) == (
        True, True, False)
    addon = addon_of(cluster, fsx.CSI_ADDON)
    assert addon is not None and addon["status"] == "ACTIVE"
    assert addon["tags"] == {"podplane:feature": "fsx-lustre"}
    (fs,) = _ours(cluster)
    assert (fs["Lifecycle"], fs["StorageCapacity"], fs["SubnetIds"]) == (
        "AVAILABLE", 2400, [cluster.compute_subnet])
    assert fs["LustreConfiguration"]["DeploymentType"] == "PERSISTENT_2"
    assert fs["LustreConfiguration"]["PerUnitStorageThroughput"] == 250
    assert {(lo, hi, src, tag) for lo, hi, src, tag in _lustre_rules(cluster)} >= {
        (lo, hi, cluster.security_group, "fsx-lustre") for lo, hi in PORTS}
    kube = await _kube(cluster)
    pv = await kube.get("v1", "PersistentVolume", fsx.PV_NAME)
    assert pv is not None and pv["spec"]["csi"] == {
        "driver": "fsx.csi.aws.com", "volumeHandle": fs["FileSystemId"],
        "volumeAttributes": {"dnsname": fs["DNSName"],
                             "mountname": fs["LustreConfiguration"]["MountName"]}}
    claim = await kube.get("v1", "PersistentVolumeClaim", fsx.CLAIM, "default")
    assert claim is not None and claim["status"]["phase"] == "Bound"
    assert claim["spec"]["volumeName"] == fsx.PV_NAME
    assert sorted(mutations(stack.ledger()[before:])) == sorted([
        "eks:CreateAddon", "ec2:AuthorizeSecurityGroupIngress",
        "ec2:AuthorizeSecurityGroupIngress", "fsx:CreateFileSystem"])
    phase, _ = await _pod_phase(cluster, "reader")
    assert phase == "Running"


@IN_ORDER
async def test_a_job_submitted_while_it_is_on_mounts_it_at_fsx(cluster: Cluster) -> None:
    """The plan of a training job on the cluster mounts the feature's claim at /fsx."""
    async with cluster.stack.client("operator") as client:
        r = await client.post(f"/api/v1/clusters/{CLUSTER}/jobs", params={"dry_run": "true"},
                              json={"name": "on-lustre", "recipe": "pytorch-ddp",
                                    "instance_group": groups.FIRST_GROUP, "replicas": 1})
    assert r.status_code == 200, r.text
    plan = r.json()["plan"]
    spec = plan["manifest"]["spec"]["replicaSpecs"][0]["template"]["spec"]
    claims = {v["name"]: v["persistentVolumeClaim"]["claimName"]
              for v in spec["volumes"] if "persistentVolumeClaim" in v}
    assert claims["fsx"] == fsx.CLAIM
    assert {"name": "fsx", "mountPath": "/fsx"} in spec["containers"][0]["volumeMounts"]
    assert any("/fsx" in note for note in plan["notes"]), plan["notes"]


@IN_ORDER
async def test_the_same_request_again_changes_nothing(cluster: Cluster) -> None:
    async with cluster.stack.client("operator") as client:
        await same_again_changes_nothing(client, cluster, URL, ON)


@IN_ORDER
async def test_a_changed_pv_is_drift_and_one_request_repairs_it(cluster: Cluster) -> None:
    kube = await _kube(cluster)
    await kube.patch("v1", "PersistentVolume", fsx.PV_NAME,
                     {"spec": {"persistentVolumeReclaimPolicy": "Delete"}})
    async with cluster.stack.client("operator") as client:
        view = (await client.get(URL)).json()
        assert view["drifted"] is True
        assert any("persistentVolumeReclaimPolicy" in d for d in view["drift"]), view["drift"]
        await _set(client, ON)
        assert (await client.get(URL)).json()["drifted"] is False
        await same_again_changes_nothing(client, cluster, URL, ON)
    pv = await kube.get("v1", "PersistentVolume", fsx.PV_NAME)
    assert pv is not None and pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"


@IN_ORDER
async def test_a_file_system_deleted_out_of_band_is_made_again(cluster: Cluster) -> None:
    stack = cluster.stack
    (old,) = _ours(cluster)
    stack.aws("fsx").delete_file_system(FileSystemId=old["FileSystemId"])
    phase, reasons = await _pod_phase(cluster, "too-late")   # its file system is going
    assert phase == "Pending" and "FailedMount" in reasons
    async with stack.client("operator") as client:
        view = (await client.get(URL)).json()
        assert view["drifted"] is True and any("fsx file system" in d for d in view["drift"])
        await _set(client, ON)
        await same_again_changes_nothing(client, cluster, URL, ON)
    (new,) = _ours(cluster)
    assert new["FileSystemId"] != old["FileSystemId"] and new["Lifecycle"] == "AVAILABLE"
    kube = await _kube(cluster)
    pv = await kube.get("v1", "PersistentVolume", fsx.PV_NAME)
    assert pv is not None and pv["spec"]["csi"]["volumeHandle"] == new["FileSystemId"]
    _settle(cluster)
    claim = await kube.get("v1", "PersistentVolumeClaim", fsx.CLAIM, "default")
    assert claim is not None and claim["status"]["phase"] == "Bound"
    phase, _ = await _pod_phase(cluster, "reader-again")
    assert phase == "Running"


@IN_ORDER
async def test_disable_removes_exactly_what_it_made(cluster: Cluster) -> None:
    stack = cluster.stack
    ec2 = stack.aws("ec2")
    theirs = {"IpProtocol": "tcp", "FromPort": 22, "ToPort": 22,
              "IpRanges": [{"CidrIp": "10.0.0.0/16"}]}
    ec2.authorize_security_group_ingress(GroupId=cluster.security_group, IpPermissions=[theirs])
    other_rules = {r["SecurityGroupRuleId"] for r in _rules(cluster)
                   if not any(t["Key"] == "podplane:feature" for t in r.get("Tags") or [])}
    kube = await _kube(cluster)
    for pod in ("reader", "too-late", "reader-again"):   # the claim's users go first
        await kube.delete("v1", "Pod", pod, namespace="default")
    before = len(stack.ledger())
    async with stack.client("operator") as operator, stack.client("admin") as admin:
        # Deleting the file system deletes its data: a destroy (ADR 0016), refused untouched.
        refused = await operator.patch(URL, json={"enabled": False})
        assert refused.status_code == 403, refused.text
        unconfirmed = await admin.patch(URL, json={"enabled": False})
        assert unconfirmed.status_code == 428, unconfirmed.text
        assert len(stack.ledger()) == before and len(_ours(cluster)) == 1
        off = await _set(admin, {"enabled": False, "confirm": True})
        (row,) = [a for a in (await admin.get("/api/v1/audit", params={
            "action": "feature.set"})).json() if a["operation_id"] == off["id"]]
        view = (await admin.get(URL)).json()
    assert row["detail"]["authority"] == {"role": "admin", "destroys": True}, row
    assert (view["desired_enabled"], view["observed_enabled"], view["drifted"]) == (
        False, False, False)
    assert sorted(mutations(stack.ledger()[before:])) == sorted([
        "eks:DeleteAddon", "ec2:RevokeSecurityGroupIngress", "ec2:RevokeSecurityGroupIngress",
        "fsx:DeleteFileSystem"])
    assert _ours(cluster) == [] and addon_of(cluster, fsx.CSI_ADDON) is None
    assert {r["SecurityGroupRuleId"] for r in _rules(cluster)} == other_rules
    assert await _objects(cluster) == {"PersistentVolume": [], "PersistentVolumeClaim": []}


@IN_ORDER
async def test_an_existing_file_system_is_mounted_and_survives_disable(cluster: Cluster
                                                                        ) -> None:
    stack = cluster.stack
    sg = cluster.security_group
    stack.aws("ec2").authorize_security_group_ingress(GroupId=sg, IpPermissions=[{
        "IpProtocol": "tcp", "FromPort": 988, "ToPort": 988, "UserIdGroupPairs": [
            {"GroupId": sg}]}])
    theirs = stack.aws("fsx").create_file_system(
        FileSystemType="LUSTRE", StorageCapacity=1200, SubnetIds=[cluster.compute_subnet],
        SecurityGroupIds=[sg], LustreConfiguration={"DeploymentType": "SCRATCH_2"},
        Tags=[{"Key": "team", "Value": "data"}])["FileSystem"]
    stack.advance(CREATE_SECONDS + 1)
    body = {"enabled": True, "settings": {"file_system_id": theirs["FileSystemId"]}}
    async with stack.client("operator") as client:
        await _set(client, body)
        await same_again_changes_nothing(client, cluster, URL, body)
        kube = await _kube(cluster)
        pv = await kube.get("v1", "PersistentVolume", fsx.PV_NAME)
        assert pv is not None and pv["spec"]["csi"]["volumeHandle"] == theirs["FileSystemId"]
        assert pv["spec"]["csi"]["volumeAttributes"] == {
            "dnsname": theirs["DNSName"],
            "mountname": theirs["LustreConfiguration"]["MountName"]}
    async with stack.client("admin") as client:   # the volume and claim go: a destroy
        off = await _set(client, {"enabled": False, "confirm": True})
    assert any(theirs["FileSystemId"] in a for a in off["plan"]["left_alone"])
    (still,) = _systems(cluster)
    assert (still["FileSystemId"], still["Lifecycle"]) == (theirs["FileSystemId"], "AVAILABLE")
    assert [e for e in stack.ledger(service="fsx", action="DeleteFileSystem")
            if e["target"] == theirs["FileSystemId"]] == []
    assert await _objects(cluster) == {"PersistentVolume": [], "PersistentVolumeClaim": []}


@pytest.mark.parametrize(("settings", "field"), [
    ({"capacity_gib": 1200}, None), ({"capacity_gib": 2400}, None),
    ({"capacity_gib": 7200}, None), ({"capacity_gib": 3600}, "capacity_gib"),
    ({"capacity_gib": 1100}, "capacity_gib"), ({"throughput_per_tib": 1000}, None),
    ({"throughput_per_tib": 100}, "throughput_per_tib"),
    ({"file_system_id": "fs-0123456789abcdef0"}, None),
    ({"file_system_id": "fs-XYZ"}, "file_system_id"), ({"file_system_id": 7}, "file_system_id")])
def test_settings_follow_the_fsx_model(settings: dict[str, Any], field: str | None) -> None:
    spec = catalog.feature(fsx.NAME)
    if field is None:
        assert catalog.check_settings(spec, settings)[next(iter(settings))] == \
            next(iter(settings.values()))
        return
    with pytest.raises(InvalidInput) as refused:
        catalog.check_settings(spec, settings)
    assert refused.value.extra["field"] == field


def test_existing_file_system_mode_never_renders_ports_or_a_file_system_to_make() -> None:
    facts = ClusterFacts("gpu", "gpu", "gpu", "123456789012", "us-west-2", "b", "arn",
                         "subnet-1", "sg-1")
    settings = catalog.check_settings(catalog.feature(fsx.NAME),
                                      {"file_system_id": "fs-0123456789abcdef0"})
    kinds = [(r.kind, r.key) for r in resources(fsx.NAME, False, settings, facts)]
    assert [k for k, _ in kinds] == ["eks-addon", "fsx-filesystem", "kube", "kube"]
    assert kinds[1][1] == "fsx file system fs-0123456789abcdef0"
    made = resources(fsx.NAME, True, catalog.defaults(catalog.feature(fsx.NAME)), facts)
    (pv,) = [r for r in made if r.desired.get("kind") == "PersistentVolume"]
    assert pv.desired["spec"]["csi"]["volumeHandle"] is None   # known once FSx made it
