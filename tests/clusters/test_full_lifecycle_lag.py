"""One cluster's whole life with the sandbox's lag mode on (IAM propagation, NAT and EC2 delete
lag): create -> add a CPU group -> add a GPU group -> reboot a node -> replace a node ->
delete. After each stage the test reads what AWS and Kubernetes show, including the sandbox's
own checks (the execution role can read the lifecycle object, device plugins registered on GPU
nodes, node-needing add-ons created only once nodes exist). Virtual time only."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from botocore.exceptions import ClientError

from podplane.domain.clusters import FIRST_GROUP
from podplane.services.clusters.identity import role_names
from podplane_sandbox.aws import iam_rules
from podplane_sandbox.aws.eks.catalog import needs_nodes
from tests.clusters.helpers import BODY, wait_done
from tests.stack import Stack

NAME = BODY["name"]
GROUPS = f"/api/v1/clusters/{NAME}/instance-groups"
NODES = f"/api/v1/clusters/{NAME}/nodes"


async def test_create_groups_reboot_replace_delete_with_lag(stack: Stack) -> None:
    assert stack.sandbox.box.world.lag is True
    async with stack.client("admin") as api:
        bucket = await _create(stack, api)
        await _add_group(stack, api, "cpu", "ml.m5.xlarge", gpus=None)
        gpu_node = await _add_group(stack, api, "gpu-b", "ml.g5.8xlarge", gpus="1")
        await _reboot(stack, api, gpu_node)
        await _replace(stack, api, gpu_node)
        await _delete(stack, api, bucket)


async def _create(stack: Stack, api: httpx.AsyncClient) -> str:
    r = await api.post("/api/v1/clusters", json=BODY)
    assert r.status_code == 202, r.text
    done = await wait_done(api, r.json()["id"])
    assert done["status"] == "succeeded", json.dumps(done["steps"], indent=1)
    hp = stack.aws("sagemaker").describe_cluster(ClusterName=NAME)
    assert hp["ClusterStatus"] == "InService"
    # the sandbox's own rule: the execution role lists the bucket and gets the object
    assert iam_rules.unreadable_lifecycle(hp["InstanceGroups"]) is None
    _all_addons_active_and_created_with_nodes(stack)
    gpus = [_allocatable(n) for n in _kube_nodes(stack, FIRST_GROUP)]
    assert gpus == ["1", "1"]  # the rendered NVIDIA plugin registered on both g5 nodes
    status = (await api.get(f"/api/v1/clusters/{NAME}")).json()
    return str(status["facts"]["bucket"])


async def _add_group(stack: Stack, api: httpx.AsyncClient, name: str, itype: str,
                     gpus: str | None) -> str:
    r = await api.post(GROUPS, json={"name": name, "instance_type": itype, "count": 1,
                                     "availability_zone": "us-west-2a"})
    assert r.status_code == 202, r.text
    done = await wait_done(api, r.json()["id"])
    assert done["status"] == "succeeded", json.dumps(done["steps"], indent=1)
    groups = {g["InstanceGroupName"]: g for g in stack.aws("sagemaker").describe_cluster(
        ClusterName=NAME)["InstanceGroups"]}
    assert groups[name]["CurrentCount"] == 1 and groups[name]["InstanceType"] == itype
    assert iam_rules.unreadable_lifecycle([groups[name]]) is None
    if gpus is None:  # AWS defines deep health checks for accelerated types only
        assert not groups[name].get("OnStartDeepHealthChecks")
    (node,) = _kube_nodes(stack, name)
    assert _ready(node) and _allocatable(node) == gpus
    _all_addons_active_and_created_with_nodes(stack)
    return str(node["metadata"]["name"]).removeprefix("hyperpod-")


async def _reboot(stack: Stack, api: httpx.AsyncClient, iid: str) -> None:
    before = _ready_since(_node(stack, iid))
    r = await api.post(f"{NODES}/{iid}/reboot")
    assert r.status_code == 202, r.text
    done = await wait_done(api, r.json()["id"])
    assert done["status"] == "succeeded", json.dumps(done["steps"], indent=1)
    assert len(stack.ledger(service="sagemaker", action="BatchRebootClusterNodes")) == 1
    stack.advance(5)  # the kubelet restarts the device plugin's container, which registers
    stack.sandbox.call(stack.sandbox.kube.settle())
    node = _node(stack, iid)  # the same instance, back: Ready again after it went down
    assert _ready(node) and _ready_since(node) > before
    assert _allocatable(node) == "1"
    summary = _hyperpod_node(stack, iid)
    assert summary["InstanceStatus"]["Status"] == "Running"


async def _replace(stack: Stack, api: httpx.AsyncClient, iid: str) -> None:
    r = await api.post(f"{NODES}/{iid}/replace", json={"confirm": True})
    assert r.status_code == 202, r.text
    done = await wait_done(api, r.json()["id"])
    assert done["status"] == "succeeded", json.dumps(done["steps"], indent=1)
    new_id = done["result"]["new_instance_id"]
    assert new_id.startswith("i-") and new_id != iid
    ids = [n["InstanceId"] for n in stack.aws("sagemaker").list_cluster_nodes(
        ClusterName=NAME)["ClusterNodeSummaries"] if n["InstanceGroupName"] == "gpu-b"]
    assert ids == [new_id]
    stack.advance(5)
    stack.sandbox.call(stack.sandbox.kube.settle())
    (node,) = _kube_nodes(stack, "gpu-b")
    assert node["metadata"]["name"] == f"hyperpod-{new_id}"
    assert _ready(node) and _allocatable(node) == "1"


async def _delete(stack: Stack, api: httpx.AsyncClient, bucket: str) -> None:
    r = await api.delete(f"/api/v1/clusters/{NAME}", params={"confirm": "true"})
    assert r.status_code == 202, r.text
    done = await wait_done(api, r.json()["id"])
    assert done["status"] == "succeeded", json.dumps(done["steps"], indent=1)
    assert stack.aws("eks").list_clusters()["clusters"] == []
    assert stack.aws("sagemaker").list_clusters()["ClusterSummaries"] == []
    ec2 = stack.aws("ec2")
    mine = [{"Name": "tag:podplane:cluster", "Values": [NAME]}]
    assert ec2.describe_vpcs(Filters=mine)["Vpcs"] == []
    assert ec2.describe_subnets(Filters=mine)["Subnets"] == []
    assert ec2.describe_security_groups(Filters=mine)["SecurityGroups"] == []
    assert ec2.describe_internet_gateways(Filters=mine)["InternetGateways"] == []
    assert ec2.describe_addresses(Filters=mine)["Addresses"] == []
    nats = ec2.describe_nat_gateways(Filters=mine)["NatGateways"]
    assert {n["State"] for n in nats} <= {"deleted"}
    iam = stack.aws("iam")
    for role in role_names(NAME, "us-west-2").values():
        with pytest.raises(ClientError) as err:
            iam.get_role(RoleName=role)
        assert err.value.response["Error"]["Code"] == "NoSuchEntity"
    # docs/clusters.md, "Delete": the shared bucket is kept, it holds data
    assert stack.aws("s3").head_bucket(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"] == 200


def _all_addons_active_and_created_with_nodes(stack: Stack) -> None:
    eks = stack.aws("eks")
    names = eks.list_addons(clusterName=NAME)["addons"]
    assert "coredns" in names and "cert-manager" in names
    for name in names:
        assert eks.describe_addon(clusterName=NAME, addonName=name)["addon"]["status"] == \
            "ACTIVE", name
    nodes_from = stack.ledger(service="sagemaker", action="CreateCluster")[0]["time"]
    for entry in stack.ledger(service="eks", action="CreateAddon"):
        if needs_nodes(entry["target"].split("/", 1)[1]):
            assert entry["time"] > nodes_from, entry["target"]


def _kube_nodes(stack: Stack, group: str) -> list[dict[str, Any]]:
    stack.sandbox.call(stack.sandbox.kube.settle())
    out = stack.kubectl("get", "nodes", "-l",
                        f"sagemaker.amazonaws.com/instance-group-name={group}", "-o", "json")
    return list(json.loads(out)["items"])


def _node(stack: Stack, iid: str) -> dict[str, Any]:
    return dict(json.loads(stack.kubectl("get", "node", f"hyperpod-{iid}", "-o", "json")))


def _hyperpod_node(stack: Stack, iid: str) -> dict[str, Any]:
    nodes = stack.aws("sagemaker").list_cluster_nodes(ClusterName=NAME)["ClusterNodeSummaries"]
    return dict(next(n for n in nodes if n["InstanceId"] == iid))


def _allocatable(node: dict[str, Any]) -> str | None:
    value = node["status"].get("allocatable", {}).get("nvidia.com/gpu")
    return None if value in (None, "0") else str(value)


def _ready(node: dict[str, Any]) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True"
               for c in node["status"].get("conditions", []))


def _ready_since(node: dict[str, Any]) -> str:
    return str(next(c["lastTransitionTime"] for c in node["status"]["conditions"]
                    if c["type"] == "Ready"))
