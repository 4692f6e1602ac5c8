"""HyperPod observability as a feature, read back as AMP, IAM, EKS and the ledger show it.

One stack for the module, on virtual time, in order: a bad workspace id is refused and changes
nothing; enable -> a Prometheus workspace ACTIVE and tagged, a role trusting EKS Pod Identity
for this cluster only whose one permission is aps:RemoteWrite on that workspace, the
collector's association naming it, the add-on ACTIVE with ampWorkspace naming the workspace;
the same request again -> changed false, no mutation; Container Insights runs beside it;
drift (role policy changed -> the add-on DEGRADED with AddonPermissionFailure; add-on removed;
workspace deleted -> DEGRADED with ConfigurationConflict) -> drifted -> one request repairs
it; disable -> exactly what it made is gone; an existing workspace by id is written to and
survives disable.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from podplane.cloud.aws.caller import AwsCaller
from podplane.cloud.kube.connector import ClusterKube
from podplane.domain.features import hyperpod_observability as hpo
from podplane.domain.features.catalog import OBSERVABILITY_ADDON
from podplane.services.clusters.state import facts_of, save_facts
from podplane.services.observe import cache_of
from podplane.store import clusters as cluster_rows
from podplane_sandbox.aws.amp import CREATE_SECONDS, DELETE_SECONDS
from podplane_sandbox.aws.eks.addons import ADDON_SECONDS
from tests.features.conftest import BASE, BUCKET, addon_of, mutations, same_again_changes_nothing
from tests.groups import conftest as groups
from tests.groups.conftest import CLUSTER, Cluster, finish
from tests.stack import running_stack

IN_ORDER = pytest.mark.asyncio(loop_scope="module")
URL = f"{BASE}/{hpo.NAME}"
ON = {"enabled": True}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Cluster]:
    async with running_stack(tmp_path_factory.mktemp("hpobs")) as stack:
        vpc, compute, private, sg = groups._network(stack)
        groups._create(stack, compute, private, sg)
        async with stack.app.state.podplane.sessions.begin() as db:
            await cluster_rows.upsert(
                db, CLUSTER, region="us-west-2", eks_cluster_name=CLUSTER,
                hyperpod_cluster_name=CLUSTER, origin="imported", state="active", spec={},
                facts={"network": {"vpc_id": vpc}})
        await save_facts(stack.app.state.podplane, CLUSTER, bucket=BUCKET)
        yield Cluster(stack, CLUSTER, vpc, compute, sg)


def _workspaces(cluster: Cluster) -> list[dict[str, Any]]:
    return list(cluster.stack.aws("amp").list_workspaces()["workspaces"])


def _ours(cluster: Cluster) -> list[dict[str, Any]]:
    amp = cluster.stack.aws("amp")
    return [amp.describe_workspace(workspaceId=w["workspaceId"])["workspace"]
            for w in _workspaces(cluster) if hpo.ours(w, CLUSTER)
            and w["status"]["statusCode"] != "DELETING"]


def _role(cluster: Cluster) -> dict[str, Any]:
    iam = cluster.stack.aws("iam")
    (role,) = [r for r in iam.list_roles()["Roles"]
               if {"Key": "podplane:feature", "Value": hpo.NAME}
               in iam.list_role_tags(RoleName=r["RoleName"])["Tags"]]
    return dict(role)


def _policies(cluster: Cluster, role: str) -> list[dict[str, Any]]:
    iam = cluster.stack.aws("iam")
    return [iam.get_role_policy(RoleName=role, PolicyName=p)["PolicyDocument"]
            for p in iam.list_role_policies(RoleName=role)["PolicyNames"]]


def _collector_roles(cluster: Cluster) -> list[str]:
    eks = cluster.stack.aws("eks")
    found = eks.list_pod_identity_associations(
        clusterName=CLUSTER, namespace=hpo.NAMESPACE, serviceAccount=hpo.COLLECTOR)
    return [eks.describe_pod_identity_association(
        clusterName=CLUSTER, associationId=a["associationId"])["association"]["roleArn"]
        for a in found["associations"]]


def _addon(cluster: Cluster) -> dict[str, Any]:
    found = addon_of(cluster, hpo.ADDON)
    assert found is not None
    return found


async def _set(client: Any, body: dict[str, Any]) -> dict[str, Any]:
    r = await client.patch(URL, json=body)
    assert r.status_code == 202, r.text
    done = await finish(client, r.json())
    assert done["status"] == "succeeded", [(s["error"] or {}).get("message") for s in done["steps"]]
    return dict(r.json())


def _wrote_to(cluster: Cluster, ws: dict[str, Any]) -> None:
    """The chain AWS needs for remote write, pointing at `ws`, and the add-on ACTIVE."""
    role = _role(cluster)
    assert _policies(cluster, role["RoleName"]) == [{
        "Version": "2012-10-17", "Statement": [{
            "Sid": "RemoteWriteToWorkspace", "Effect": "Allow", "Action": "aps:RemoteWrite",
            "Resource": ws["arn"]}]}]
    assert _collector_roles(cluster) == [role["Arn"]]
    addon = _addon(cluster)
    assert (addon["status"], addon["health"]["issues"]) == ("ACTIVE", [])
    config = json.loads(addon["configurationValues"])
    assert config["ampWorkspace"] == {"prometheusEndpoint": ws["prometheusEndpoint"],
                                      "arn": ws["arn"]}


@IN_ORDER
async def test_a_bad_workspace_id_is_refused_and_changes_nothing(cluster: Cluster) -> None:
    stack = cluster.stack
    count = len(stack.ledger())
    async with stack.client("operator") as client:
        for ws_id in ("my-workspace", "ws-00000000-0000-0000-0000-000000000000"):
            r = await client.patch(URL, json={"enabled": True,
                                              "settings": {"workspace_id": ws_id}})
            assert r.status_code == 422, r.text
            assert r.json()["field"] == "workspace_id"
    assert len(stack.ledger()) == count and _workspaces(cluster) == []


@IN_ORDER
async def test_enable_makes_the_chain_and_again_changes_nothing(cluster: Cluster) -> None:
    stack = cluster.stack
    before = len(stack.ledger())
    async with stack.client("operator") as client:
        plan = (await client.post(f"{URL}/plan", json=ON)).json()["plan"]
        assert [a["kind"] for a in plan["actions"]] == [
            "amp-workspace", "iam-role", "pod-identity", "eks-addon"]
        await _set(client, ON)
        view = (await client.get(URL)).json()
        await same_again_changes_nothing(client, cluster, URL, ON)
    assert (view["observed_enabled"], view["drifted"]) == (True, False)
    (ws,) = _ours(cluster)
    assert ws["status"] == {"statusCode": "ACTIVE"}
    assert ws["tags"] == {"podplane:feature": hpo.NAME, "podplane:cluster": CLUSTER}
    _wrote_to(cluster, ws)
    trust = _role(cluster)["AssumeRolePolicyDocument"]
    trust = json.loads(trust) if isinstance(trust, str) else trust
    (stmt,) = trust["Statement"]
    assert stmt["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert stmt["Condition"]["StringEquals"]["aws:SourceArn"] == \
        f"arn:aws:eks:us-west-2:123456789012:cluster/{CLUSTER}"
    assert _addon(cluster)["tags"] == {"podplane:feature": hpo.NAME}
    assert sorted(mutations(stack.ledger()[before:])) == sorted([
        "amp:CreateWorkspace", "iam:CreateRole", "iam:PutRolePolicy",
        "eks:CreatePodIdentityAssociation", "eks:CreateAddon"])


@IN_ORDER
async def test_container_insights_runs_beside_it(cluster: Cluster) -> None:
    async with cluster.stack.client("operator") as client:
        r = await client.patch(f"{BASE}/observability", json=ON)
        assert r.status_code == 202, r.text
        assert (await finish(client, r.json()))["status"] == "succeeded"
        assert (await client.get(URL)).json()["drifted"] is False
    cloudwatch = addon_of(cluster, OBSERVABILITY_ADDON)
    assert cloudwatch is not None and cloudwatch["status"] == "ACTIVE"
    assert _addon(cluster)["status"] == "ACTIVE"


@IN_ORDER
async def test_what_a_watcher_polls_reads_each_resource_once_per_interval(
        cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    """The views a console tab or agent polls (the cluster's status, its nodes, its features),
    read again within the observation interval, reach AWS and Kubernetes no more (issue 21):
    read through podplane's own AWS caller and Kubernetes adapter, where every call passes."""
    calls: Counter[str] = Counter()
    monkeypatch.setattr(AwsCaller, "call", _counted(calls, AwsCaller.call, "aws"))
    for name in ("get", "list"):
        monkeypatch.setattr(ClusterKube, name, _counted(calls, getattr(ClusterKube, name), name))
    cache = cache_of(cluster.stack.app.state.podplane.cloud)
    assert cache is not None
    # retained for one interval (not the suite's mode), on a clock that stands still past
    # every earlier read
    for attr, value in (("fast", 5.0), ("clock", lambda: 1e12), ("watch_kube", False)):
        monkeypatch.setattr(cache, attr, value)
    views = [f"/api/v1/clusters/{CLUSTER}", f"/api/v1/clusters/{CLUSTER}/nodes", BASE, URL]
    state = cluster.stack.app.state.podplane
    kept = await facts_of(state, CLUSTER)
    await save_facts(state, CLUSTER, network=_FULL_NETWORK)  # as a create records it
    try:
        async with cluster.stack.client("viewer") as client:
            for view in views:
                r = await client.get(view)
                assert r.status_code == 200, (view, r.text)
            first = calls.copy()
            for _ in range(3):  # three more watchers, all at once
                replies = await asyncio.gather(*(client.get(v) for v in views))
                assert {r.status_code for r in replies} == {200}
    finally:
        await save_facts(state, CLUSTER, **kept)
    assert first["aws:eks.describe_addon_versions"] >= 1 and first["list"] >= 1
    assert calls == first, calls - first


_FULL_NETWORK = {
    "vpc_id": "vpc-0", "vpc_cidr": "10.0.0.0/16", "public_subnets": ["subnet-1"],
    "private_subnets": ["subnet-2"], "compute_subnet": "subnet-3", "compute_az": "us-west-2a",
    "internet_gateway": "igw-0", "nat_gateway": "nat-0", "route_tables": ["rtb-0"],
    "s3_endpoint": "vpce-0", "security_group": "sg-0"}


def _counted(calls: Counter[str], method: Any, label: str) -> Any:
    async def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls[f"{label}:{args[0]}.{args[1]}" if label == "aws" else label] += 1
        return await method(self, *args, **kwargs)
    return counted


@IN_ORDER
async def test_a_changed_role_policy_degrades_the_addon_and_one_request_repairs_it(
        cluster: Cluster) -> None:
    stack = cluster.stack
    role = _role(cluster)["RoleName"]
    (name,) = stack.aws("iam").list_role_policies(RoleName=role)["PolicyNames"]
    stack.aws("iam").put_role_policy(RoleName=role, PolicyName=name, PolicyDocument=json.dumps({
        "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "aps:QueryMetrics",
                                                 "Resource": "*"}]}))
    stack.advance(30)
    addon = _addon(cluster)
    assert addon["status"] == "DEGRADED"
    assert [i["code"] for i in addon["health"]["issues"]] == ["AddonPermissionFailure"]
    assert "aps:RemoteWrite" in addon["health"]["issues"][0]["message"]
    async with stack.client("operator") as client:
        view = (await client.get(URL)).json()
        assert view["drifted"] is True and any("iam role" in d for d in view["drift"])
        before = len(stack.ledger())
        await _set(client, ON)
        assert mutations(stack.ledger()[before:]) == ["iam:PutRolePolicy"]
        stack.advance(30)
        await same_again_changes_nothing(client, cluster, URL, ON)
    _wrote_to(cluster, _ours(cluster)[0])


@IN_ORDER
async def test_a_removed_addon_is_drift_and_one_request_puts_it_back(cluster: Cluster) -> None:
    stack = cluster.stack
    stack.aws("eks").delete_addon(clusterName=CLUSTER, addonName=hpo.ADDON)
    stack.advance(ADDON_SECONDS)
    assert addon_of(cluster, hpo.ADDON) is None
    async with stack.client("operator") as client:
        view = (await client.get(URL)).json()
        assert view["drifted"] is True and any(hpo.ADDON in d for d in view["drift"])
        before = len(stack.ledger())
        await _set(client, ON)
        assert mutations(stack.ledger()[before:]) == ["eks:CreateAddon"]
        await same_again_changes_nothing(client, cluster, URL, ON)
    _wrote_to(cluster, _ours(cluster)[0])


@IN_ORDER
async def test_a_deleted_workspace_is_made_again_and_everything_points_at_it(
        cluster: Cluster) -> None:
    stack = cluster.stack
    (old,) = _ours(cluster)
    stack.aws("amp").delete_workspace(workspaceId=old["workspaceId"])
    stack.advance(DELETE_SECONDS + 1)
    addon = _addon(cluster)
    assert addon["status"] == "DEGRADED"
    assert [i["code"] for i in addon["health"]["issues"]] == ["ConfigurationConflict"]
    async with stack.client("operator") as client:
        view = (await client.get(URL)).json()
        assert view["drifted"] is True and any("amp workspace" in d for d in view["drift"])
        before = len(stack.ledger())
        await _set(client, ON)
        assert sorted(mutations(stack.ledger()[before:])) == sorted([
            "amp:CreateWorkspace", "iam:PutRolePolicy", "eks:UpdateAddon"])
        stack.advance(ADDON_SECONDS)
        await same_again_changes_nothing(client, cluster, URL, ON)
    (new,) = _ours(cluster)
    assert new["workspaceId"] != old["workspaceId"]
    _wrote_to(cluster, new)


@IN_ORDER
async def test_disable_removes_exactly_what_it_made(cluster: Cluster) -> None:
    stack = cluster.stack
    role = _role(cluster)["RoleName"]
    before = len(stack.ledger())
    async with stack.client("operator") as operator:   # the workspace's metrics go: a destroy
        assert (await operator.patch(URL, json={"enabled": False})).status_code == 403
    assert len(stack.ledger()) == before
    async with stack.client("admin") as client:
        off = await _set(client, {"enabled": False, "confirm": True})
        view = (await client.get(URL)).json()
    assert [a["kind"] for a in off["plan"]["actions"]] == [
        "eks-addon", "pod-identity", "amp-workspace", "iam-role"]
    assert (view["observed_enabled"], view["drifted"]) == (False, False)
    assert sorted(mutations(stack.ledger()[before:])) == sorted([
        "eks:DeleteAddon", "eks:DeletePodIdentityAssociation", "amp:DeleteWorkspace",
        "iam:DeleteRolePolicy", "iam:DeleteRole"])
    assert addon_of(cluster, hpo.ADDON) is None and _collector_roles(cluster) == []
    assert _ours(cluster) == []
    assert role not in [r["RoleName"] for r in stack.aws("iam").list_roles()["Roles"]]
    cloudwatch = addon_of(cluster, OBSERVABILITY_ADDON)   # Container Insights untouched
    assert cloudwatch is not None and cloudwatch["status"] == "ACTIVE"


@IN_ORDER
async def test_an_existing_workspace_is_written_to_and_survives_disable(
        cluster: Cluster) -> None:
    stack = cluster.stack
    theirs = stack.aws("amp").create_workspace(alias="team-metrics", tags={"team": "ml"})
    stack.advance(CREATE_SECONDS + 1)
    ws = stack.aws("amp").describe_workspace(workspaceId=theirs["workspaceId"])["workspace"]
    body = {"enabled": True, "settings": {"workspace_id": ws["workspaceId"]}}
    async with stack.client("operator") as client:
        await _set(client, body)
        await same_again_changes_nothing(client, cluster, URL, body)
        _wrote_to(cluster, ws)
        off = await _set(client, {"enabled": False})
    assert any(ws["workspaceId"] in a for a in off["plan"]["left_alone"]), off["plan"]
    still = stack.aws("amp").describe_workspace(workspaceId=ws["workspaceId"])["workspace"]
    assert still["status"] == {"statusCode": "ACTIVE"}
    assert [e for e in stack.ledger(service="amp", action="DeleteWorkspace")
            if e["target"] == ws["workspaceId"]] == []
