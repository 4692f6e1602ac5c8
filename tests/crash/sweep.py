"""The crash sweep: every workflow kind the engine registers, killed (SIGKILL) at every crash
point its operation reaches: each phase write, and right after each cloud call before its phase
is written. After each kill the control plane restarts and resumes. Then: exactly one cloud
mutation each (the sandbox ledger) and the final cloud state read back with boto3 / kubectl.

The kinds come from the registered workflows: a new kind fails `test_every_kind_is_swept`
(tests/crash/test_sweep.py) until it gets a driver below and a place in SHARDS, and its crash
points are found by the sweep itself (the test kit's PODPLANE_CRASH_SWEEP kills at each point
it has not killed at yet).

The kinds are split in SHARDS, one test module each, so xdist runs them side by side. The
`create` shard starts from an empty cloud (it sweeps the create itself); each other shard runs
its kinds in order on its own copy of the run's golden swept cluster (`golden_world`: the same
create, not swept, with check_create's assertions), so a shard costs a restore, not a create.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from podplane.bootstrap import build_state, load_testkit, product_workflows
from podplane.domain.clusters import FIRST_GROUP
from podplane.domain.dependencies import TRAINING_OPERATOR_POLICY
from podplane.services.clusters.addon_identity import addon_role_name
from podplane.services.clusters.identity import role_names
from podplane.settings import Settings
from podplane_testkit.touch import FakeCloud
from tests.crash.harness import MUTATING as MUTATING_AWS
from tests.crash.harness import (
    TERMINAL,
    SweepCloud,
    SweepResult,
    SweepServer,
    count,
    duplicates,
    sweep,
    until_end,
)
from tests.golden import golden_folder
from tests.stack import KUBECTL

CLUSTER, IMPORTED, EXTRA = "sweep", "sweep-imported", "extra"
BODY = {"name": CLUSTER, "region": "us-west-2", "availability_zone": "us-west-2a",
        "instance_type": "ml.g5.8xlarge", "count": 2, "capacity_type": "on-demand",
        "deep_health_checks": False}
GROUPS = f"/api/v1/clusters/{CLUSTER}/instance-groups"
NODES = f"/api/v1/clusters/{CLUSTER}/nodes"
JOBS = f"/api/v1/clusters/{CLUSTER}/jobs"
HOLD = "podplane.io/sweep-hold=true:NoSchedule"
JOB, HP_JOBS = "swept", "sagemaker.amazonaws.com/hyperpodpytorchjobs"
MODEL = "swept-model"
ENDPOINTS, ENDPOINT = f"/api/v1/clusters/{CLUSTER}/endpoints", "swept-ep"
POOLS, POOL, POOL_EP = f"/api/v1/clusters/{CLUSTER}/pools", "swept-pool", "swept-pool-ep"
SPACES, SPACE = f"/api/v1/clusters/{CLUSTER}/spaces", "swept-space"
NEW_IMAGE = "docker.io/vllm/vllm-openai:latest"


def registered_kinds() -> list[str]:
    """Every kind an engine with the test kit runs (what bootstrap registers)."""
    import tempfile

    with tempfile.TemporaryDirectory() as home:
        state = build_state(Settings(home=Path(home), database_url=f"sqlite:///{home}/k.db"))
        os.environ.setdefault("PODPLANE_TEST_WORKFLOWS", "1")
        kit = load_testkit()
        assert kit is not None
        cloud: Any = SimpleNamespace(aws=SimpleNamespace(hyperpod=object()))  # never called
        flows = product_workflows(state, cloud) + kit.workflows(state)
    return sorted(f.kind for f in flows)


@dataclass
class World:
    cloud: SweepCloud
    server: SweepServer
    token: str
    tmp: Path
    rows: list[SweepResult] = field(default_factory=list)
    picked: dict[str, str] = field(default_factory=dict)

    def nodes(self, group: str | None = None) -> list[dict[str, Any]]:
        out = self.cloud.aws("sagemaker").list_cluster_nodes(ClusterName=CLUSTER)
        return [n for n in out["ClusterNodeSummaries"]
                if group is None or n["InstanceGroupName"] == group]

    def kube_items(self, resource: str) -> list[dict[str, Any]]:
        """What the cluster's Kubernetes API server stores (namespace default)."""
        self.cloud.sandbox.call(self.cloud.sandbox.kube.settle())
        return list(self.cloud.sandbox.kube.get(CLUSTER).store.items(resource, "default"))

    def kubectl(self, *args: str) -> str:
        self.cloud.sandbox.call(self.cloud.sandbox.kube.ready())
        env = {**os.environ, "KUBECONFIG": str(self.cloud.sandbox.kube.kubeconfig_path)}
        done = subprocess.run([KUBECTL, "--context", CLUSTER, *args],
                              env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def kube_nodes(self) -> list[dict[str, Any]]:
        return list(json.loads(self.kubectl("get", "nodes", "-o", "json"))["items"])

    def hold_first_group(self, on: bool) -> None:
        """Taint (or untaint) the first group's Nodes out of band, as an admin would: a job's
        pods then stay Pending, so a sped-up clock cannot finish the job before it is
        cancelled (the submit's plan counts GPUs, not taints)."""
        for n in self.kube_nodes():
            labels = n["metadata"].get("labels") or {}
            if labels.get("sagemaker.amazonaws.com/instance-group-name") == FIRST_GROUP:
                self.kubectl("taint", "nodes", n["metadata"]["name"],
                             HOLD + ("" if on else "-"))


@contextmanager
def opened_world(tmp: Path, token_name: str) -> Iterator[World]:
    """The sweep's sandbox (in process, clock sped up) and control plane on the state in `tmp`
    (empty, or a copy of the golden)."""
    cloud = SweepCloud(tmp / "cloud", speed=1200)
    server = SweepServer(tmp / "cp", {
        "PODPLANE_DATABASE_URL": f"sqlite:///{tmp / 'cp.db'}", "AWS_ENDPOINT_URL": cloud.url,
        "PODPLANE_BACKEND": "sandbox", "PODPLANE_SANDBOX_SECRET": cloud.sandbox.box.secret,
        "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
        "PODPLANE_TEST_LEDGER": str(tmp / "fake-cloud.jsonl")})
    try:
        yield World(cloud, server, server.token(token_name), tmp)
    finally:
        server.close()
        cloud.stop()


@contextmanager
def shard_world(factory: pytest.TempPathFactory, shard: str) -> Iterator[World]:
    """A shard's world: empty for `create`, else a private copy of the golden swept cluster."""
    tmp = factory.mktemp(f"sweep-{shard}")
    if shard != "create":
        shutil.copytree(golden_folder(factory, "swept-cluster", build_golden), tmp,
                        dirs_exist_ok=True)
    began = time.monotonic()
    with opened_world(tmp, "sweeper") as w:
        try:
            yield w
        finally:
            _print_table(w.rows, time.monotonic() - began)


def build_golden(folder: Path) -> dict[str, Any]:
    """The cluster the shards after `create` start from: BODY created on the sweep's own
    control plane with no crash point, then check_create's assertions on what it made."""
    with opened_world(folder, "golden-sweeper") as w:
        assert w.server.start_sweeping(None)
        since = len(w.cloud.ledger())
        try:
            with w.server.api(w.token, timeout=30) as api:
                r = api.post("/api/v1/clusters", json=BODY)
                assert r.status_code == 202, r.text
                op = until_end(w.server, api, r.json()["id"])
        finally:
            w.server.stop()
        assert op is not None and op["status"] == "succeeded", op
        check_create(w, SweepResult("cluster.create", op, [], 0, 0.0,
                                    w.cloud.ledger()[since:]))
    return {"cluster": CLUSTER}


def _print_table(rows: list[SweepResult], seconds: float) -> None:
    print(f"\ncrash sweep: {len(rows)} kinds, {sum(len(r.points) for r in rows)} "
          f"(workflow, point) kills, {seconds:.0f} s")
    print(f"{'kind':22} {'kills':>5} {'secs':>5}  status     checks / points")
    for r in rows:
        print(f"{r.kind:22} {r.kills:5} {r.seconds:5.0f}  {r.op['status']:10} "
              f"{', '.join(r.checks)}")
        print(f"{'':36}points: {', '.join(r.points)}")
        if r.quiet:
            print(f"{'':36}steps with no phase (read-only waits): {', '.join(r.quiet)}")


# -- drivers: how each kind is started, and what the cloud must show afterwards -------------

Check = Callable[[World, SweepResult], list[str]]


def _post(path: str, body: dict[str, Any] | None = None,
          **query: Any) -> Callable[[httpx.Client, str], httpx.Response]:
    def start(api: httpx.Client, key: str) -> httpx.Response:
        return api.post(path, json=body, params=query, headers={"Idempotency-Key": key})
    return start


def check_touch(w: World, r: SweepResult) -> list[str]:
    touches = FakeCloud(w.tmp / "fake-cloud.jsonl").entries()
    assert len(touches) == 1 and touches[0]["client_token"] == r.op["result"]["client_token"]
    return ["fake cloud touched once"]


def check_create(w: World, r: SweepResult) -> list[str]:
    for service, action in (("eks", "CreateCluster"), ("sagemaker", "CreateCluster"),
                            ("ec2", "CreateVpc"), ("ec2", "CreateNatGateway"),
                            ("ec2", "CreateInternetGateway")):
        assert count(r.ledger, service, action) == 1, (service, action)
    ec2 = w.cloud.aws("ec2")
    (vpc,) = ec2.describe_vpcs(Filters=[{"Name": "tag:podplane:cluster",
                                         "Values": [CLUSTER]}])["Vpcs"]
    vpc_id = vpc["VpcId"]
    for attr, key in (("enableDnsSupport", "EnableDnsSupport"),
                      ("enableDnsHostnames", "EnableDnsHostnames")):
        assert ec2.describe_vpc_attribute(VpcId=vpc_id, Attribute=attr)[key]["Value"]
    (igw,) = ec2.describe_internet_gateways(Filters=[
        {"Name": "attachment.vpc-id", "Values": [vpc_id]}])["InternetGateways"]
    tables = ec2.describe_route_tables(Filters=[{"Name": "vpc-id", "Values": [vpc_id]}])
    defaults = {r.get("GatewayId") or r.get("NatGatewayId")
                for t in tables["RouteTables"] for r in t["Routes"]
                if r.get("DestinationCidrBlock") == "0.0.0.0/0"}
    (nat,) = [n for n in ec2.describe_nat_gateways(Filter=[
        {"Name": "vpc-id", "Values": [vpc_id]}])["NatGateways"] if n["State"] == "available"]
    assert {igw["InternetGatewayId"], nat["NatGatewayId"]} <= defaults
    subnets = ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc_id]}])["Subnets"]
    routed = {a.get("SubnetId") for t in tables["RouteTables"] for a in t["Associations"]}
    assert {s["SubnetId"] for s in subnets} <= routed
    (sg,) = ec2.describe_security_groups(Filters=[
        {"Name": "tag:podplane:role", "Values": ["efa-sg"]},
        {"Name": "vpc-id", "Values": [vpc_id]}])["SecurityGroups"]
    assert any(p["IpProtocol"] == "-1" and p.get("UserIdGroupPairs")
               for p in sg["IpPermissions"])
    eks = w.cloud.aws("eks").describe_cluster(name=CLUSTER)["cluster"]
    assert eks["status"] == "ACTIVE"
    hp = w.cloud.aws("sagemaker").describe_cluster(ClusterName=CLUSTER)
    assert hp["ClusterStatus"] == "InService"
    running = [n for n in w.nodes(FIRST_GROUP) if n["InstanceStatus"]["Status"] == "Running"]
    assert len(running) == 2
    assert len(w.kube_nodes()) == 2
    bucket = r.op["result"]["bucket"]
    tags = w.cloud.aws("s3").get_bucket_tagging(Bucket=bucket)["TagSet"]
    assert {"Key": "podplane:cluster", "Value": CLUSTER} in tags
    return ["1x eks/sagemaker CreateCluster, VPC/NAT/IGW", "bucket tagged", "DNS attrs",
            "default routes",
            "every subnet routed", "SG self rule", "EKS ACTIVE", "HyperPod InService",
            "2 nodes Running", "2 kube Nodes"]


def _group_nodes_running(w: World, group: str, n: int) -> None:
    running = [x for x in w.nodes(group) if x["InstanceStatus"]["Status"] == "Running"]
    assert len(running) == n, w.nodes(group)
    names = {x["metadata"]["labels"].get("sagemaker.amazonaws.com/instance-group-name")
             for x in w.kube_nodes()}
    assert (group in names) == (n > 0)


def check_group(count_now: int) -> Check:
    def check(w: World, r: SweepResult) -> list[str]:
        (update,) = [e for e in r.ledger if e["action"] == "UpdateCluster"]
        field = {"instance_group.add": "added", "instance_group.scale": "scaled",
                 "instance_group.delete": "deleted"}[r.kind]
        hp = w.cloud.aws("sagemaker").describe_cluster(ClusterName=CLUSTER)
        groups = {g["InstanceGroupName"]: g for g in hp["InstanceGroups"]}
        if field == "scaled":  # UpdateCluster lists every kept group; only extra's count moved
            assert EXTRA in update["params"][field], update
            assert groups[FIRST_GROUP]["TargetCount"] == 2, groups[FIRST_GROUP]
        else:
            assert update["params"][field] == [EXTRA], update  # the one update's change
        if count_now == 0:
            assert EXTRA not in groups or groups[EXTRA]["Status"] == "Deleting"
            assert not [x for x in w.nodes(EXTRA) if x["InstanceStatus"]["Status"] == "Running"]
            return ["1x UpdateCluster", f"group {EXTRA} gone", "its nodes gone"]
        assert groups[EXTRA]["TargetCount"] == count_now
        _group_nodes_running(w, EXTRA, count_now)
        return ["1x UpdateCluster", f"TargetCount {count_now}", f"{count_now} Running",
                "kube Nodes labelled"]
    return check


def _node_start(kind: str) -> Callable[[httpx.Client, str], httpx.Response]:
    def start(api: httpx.Client, key: str) -> httpx.Response:
        node = WORLD.picked.setdefault(kind, WORLD.nodes(EXTRA)[0]["InstanceId"])
        action = {"node.reboot": "reboot", "node.replace": "replace"}.get(kind)
        if action is None:
            return api.delete(f"{NODES}/{node}", params={"confirm": True},
                              headers={"Idempotency-Key": key})
        return api.post(f"{NODES}/{node}/{action}", params={"confirm": True},
                        headers={"Idempotency-Key": key})
    return start


def _instance_of(node: dict[str, Any]) -> str:
    """The EC2 instance id in a HyperPod Node's providerID
    (aws:///<az>/sagemaker/cluster/hyperpod-<cluster id>-i-<instance>)."""
    return "i-" + node["spec"].get("providerID", "").rsplit("-i-", 1)[-1]


def check_node(kind: str, action: str) -> Check:
    def check(w: World, r: SweepResult) -> list[str]:
        node = w.picked[kind]
        assert count(r.ledger, "sagemaker", action) == 1, [e["action"] for e in r.ledger]
        ids = {x["InstanceId"]: x["InstanceStatus"]["Status"] for x in w.nodes()}
        kube_ids = {_instance_of(x) for x in w.kube_nodes()}
        if kind == "node.reboot":
            assert ids.get(node) == "Running" and node in kube_ids
            return [f"1x {action}", "node Running again", "kube Node back"]
        assert node not in ids and node not in kube_ids
        if kind == "node.replace":
            new = r.op["result"]["new_instance_id"]
            assert ids.get(new) == "Running" and new in kube_ids
            return [f"1x {action}", "old node gone", "new node Running + kube Node"]
        return [f"1x {action}", "node gone", "kube Node gone"]
    return check


def _submit(api: httpx.Client, key: str) -> httpx.Response:
    if "hold" not in WORLD.picked:
        WORLD.hold_first_group(True)
        WORLD.picked["hold"] = HOLD
    return api.post(JOBS, json={"name": JOB, "recipe": "pytorch-ddp",
                                "instance_group": FIRST_GROUP, "replicas": 1},
                    headers={"Idempotency-Key": key})


def _job_pods(w: World) -> list[dict[str, Any]]:
    return [p for p in w.kube_items("pods")
            if (p["metadata"].get("labels") or {}).get("HPJob") == JOB
            and (p.get("status") or {}).get("phase") in ("Pending", "Running")]


def check_job(kind: str) -> Check:
    """Kubernetes keeps no ledger: the job's uid is the one the submit created (never deleted
    and created again), and its pods and suspension are read back."""
    def check(w: World, r: SweepResult) -> list[str]:
        jobs = [j for j in w.kube_items(HP_JOBS) if j["metadata"]["name"] == JOB]
        assert not [e for e in r.ledger if e["action"].startswith(MUTATING_AWS)], r.ledger
        if kind == "job.delete":
            assert jobs == [] and _job_pods(w) == []
            w.hold_first_group(False)
            return ["no AWS mutation", "job gone", "its pods gone"]
        (job,) = jobs
        if kind == "job.submit":
            w.picked[JOB] = r.op["result"]["uid"]
        assert job["metadata"]["uid"] == w.picked[JOB]
        if kind == "job.submit":
            assert (job.get("status") or {}).get("conditions"), job.get("status")
            assert [p["status"].get("phase") for p in _job_pods(w)] == ["Pending"]
            return ["no AWS mutation", "1 job (uid of the apply)", "operator took it",
                    "1 pod (held Pending)"]
        assert job["spec"]["runPolicy"]["suspend"] is True
        assert _job_pods(w) == []
        return ["no AWS mutation", "same job uid", "runPolicy.suspend", "no pod running"]
    return check


def _endpoint_pods(w: World) -> list[dict[str, Any]]:
    return [p for p in w.kube_items("pods")
            if (p["metadata"].get("labels") or {}).get("podplane.io/endpoint") == ENDPOINT
            and not p["metadata"].get("deletionTimestamp")]


def _autoscale(api: httpx.Client, key: str) -> httpx.Response:
    """KEDA on first (its feature.set may be killed too: the key finds it again), then the
    endpoint's autoscaling."""
    on = api.patch(f"/api/v1/clusters/{CLUSTER}/features/keda", json={"enabled": True},
                   headers={"Idempotency-Key": f"{key}-keda"})
    if on.status_code == 202:
        while api.get(f"/api/v1/operations/{on.json()['id']}/wait",
                      params={"timeout": 5}).json().get("status") not in TERMINAL:
            pass
    return api.patch(f"{ENDPOINTS}/{ENDPOINT}", headers={"Idempotency-Key": key}, json={
        "autoscaling": {"min_replicas": 1, "max_replicas": 2}})


def check_autoscale(w: World, r: SweepResult) -> list[str]:
    """One ScaledObject, podplane's, and the HPA KEDA made from it."""
    assert not [e for e in r.ledger if e["action"].startswith(MUTATING_AWS)], r.ledger
    (so,) = [o for o in w.kube_items("keda.sh/scaledobjects")
             if o["metadata"]["name"] == ENDPOINT]
    assert so["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "podplane"
    assert [h for h in w.kube_items("autoscaling/horizontalpodautoscalers")
            if h["metadata"]["name"] == f"keda-hpa-{ENDPOINT}"]
    return ["1 ScaledObject (podplane's)", "KEDA's HPA"]


def _unassign(api: httpx.Client, key: str) -> None:
    """Before the pool's delete is swept (a pool with an assigned pod is refused): the
    endpoint's pod unassigned, on a server with no crash points (its own kind is swept)."""
    off = api.post(f"{POOLS}/{POOL}/assign",
                   json={"endpoint": POOL_EP, "pods": 0, "confirm": True},
                   headers={"Idempotency-Key": key})
    assert off.status_code == 202, off.text
    while api.get(f"/api/v1/operations/{off.json()['id']}/wait",
                  params={"timeout": 5}).json().get("status") not in TERMINAL:
        pass


def _pool_pods(w: World) -> list[dict[str, Any]]:
    return [p for p in w.kube_items("pods")
            if (p["metadata"].get("labels") or {}).get("podplane.io/pool") == POOL
            and not p["metadata"].get("deletionTimestamp")]


def check_pool(kind: str) -> Check:
    """The pool's Deployment keeps the uid its create made; the pods, their assignment and the
    endpoint's Service are read back; no AWS mutation."""
    def check(w: World, r: SweepResult) -> list[str]:
        assert not [e for e in r.ledger if e["action"].startswith(MUTATING_AWS)], r.ledger
        deps = [d for d in w.kube_items("apps/deployments") if d["metadata"]["name"] == POOL]
        if kind == "pool.delete":
            assert deps == [] and _pool_pods(w) == []
            return ["no AWS mutation", "Deployment and pods gone"]
        (dep,) = deps
        if kind == "pool.create":
            w.picked[POOL] = dep["metadata"]["uid"]
        assert dep["metadata"]["uid"] == w.picked[POOL]
        pods = _pool_pods(w)
        assigned = [p for p in pods if (p["metadata"].get("labels") or {}).get(
            "podplane.io/assigned") == POOL_EP]
        if kind == "pool.assign":
            assert len(assigned) == 1 and [s for s in w.kube_items("services")
                                           if s["metadata"]["name"] == POOL_EP]
            w.picked[POOL_EP] = assigned[0]["metadata"]["uid"]
        wanted = 1 if kind == "pool.scale" else 2
        assert len(pods) == wanted, [p["metadata"]["name"] for p in pods]
        if kind == "pool.scale":  # the free pod went; the serving one stayed
            assert [p["metadata"]["uid"] for p in pods] == [w.picked[POOL_EP]]
        return ["no AWS mutation", "1 Deployment (uid of the create)", f"{wanted} pod(s)",
                f"{len(assigned)} assigned"]
    return check


def check_endpoint(kind: str) -> Check:
    """The Deployment's uid is the one the create made (never deleted and made again); its
    Ready pods and Service are read back."""
    def check(w: World, r: SweepResult) -> list[str]:
        assert not [e for e in r.ledger if e["action"].startswith(MUTATING_AWS)], r.ledger
        deps = [d for d in w.kube_items("apps/deployments")
                if d["metadata"]["name"] == ENDPOINT]
        services = [s for s in w.kube_items("services") if s["metadata"]["name"] == ENDPOINT]
        if kind == "endpoint.delete":
            assert deps == [] and services == [] and _endpoint_pods(w) == []
            return ["no AWS mutation", "Deployment, Service, pods gone"]
        (dep,) = deps
        assert len(services) == 1
        if kind == "endpoint.create":
            w.picked[ENDPOINT] = dep["metadata"]["uid"]
        assert dep["metadata"]["uid"] == w.picked[ENDPOINT]
        wanted = 2 if kind == "endpoint.scale" else 1
        if kind == "endpoint.update":  # every pod runs the new image (the old one is gone)
            assert {p["spec"]["containers"][0]["image"] for p in _endpoint_pods(w)} == {NEW_IMAGE}
        ready = [p for p in _endpoint_pods(w) if any(
            c["type"] == "Ready" and c["status"] == "True"
            for c in p["status"].get("conditions") or [])]
        assert len(ready) == wanted == len(_endpoint_pods(w))
        return ["no AWS mutation", "1 Deployment (uid of the create)", "1 Service",
                f"{wanted} Ready pod(s)"]
    return check


def _named(w: World, resource: str, name: str) -> list[dict[str, Any]]:
    return [o for o in w.kube_items(resource) if o["metadata"]["name"] == name]


def check_space(kind: str) -> Check:
    """One Workspace, one token Secret and one home claim, each the uid its create made (a
    resumed step never mints a second token nor a second home); its pod Running, or none once
    stopped; a delete leaves the home."""
    def check(w: World, r: SweepResult) -> list[str]:
        assert not [e for e in r.ledger if e["action"].startswith(MUTATING_AWS)], r.ledger
        spaces = _named(w, "workspace.jupyter.org/workspaces", SPACE)
        homes = _named(w, "persistentvolumeclaims", f"space-{SPACE}-home")
        secrets = _named(w, "secrets", f"space-{SPACE}-token")
        pods = [p for p in w.kube_items("pods") if (p["metadata"].get("labels") or {}).get(
            "workspace.jupyter.org/workspace-name") == SPACE]
        if kind == "space.create":
            w.picked.update({SPACE: spaces[0]["metadata"]["uid"],
                             "home": homes[0]["metadata"]["uid"],
                             "token": secrets[0]["metadata"]["uid"]})
        assert [h["metadata"]["uid"] for h in homes] == [w.picked["home"]]
        if kind == "space.delete":
            assert spaces == [] and secrets == []
            return ["no AWS mutation", "Workspace and token gone", "home kept"]
        assert [s["metadata"]["uid"] for s in spaces] == [w.picked[SPACE]]
        assert [s["metadata"]["uid"] for s in secrets] == [w.picked["token"]]
        running = [p for p in pods if p["status"].get("phase") == "Running"]
        assert len(running) == (0 if kind == "space.state" else 1), pods
        return ["no AWS mutation", "1 Workspace, token and home (uids of the create)",
                f"{len(running)} pod(s) running"]
    return check


def _spaces_on(api: httpx.Client, key: str) -> None:
    r = api.patch(f"/api/v1/clusters/{CLUSTER}/features/spaces", json={"enabled": True},
                  headers={"Idempotency-Key": key})
    assert r.status_code == 202, r.text
    op = r.json()
    while op["status"] not in ("succeeded", "failed", "cancelled"):  # within api's 30 s
        op = api.get(f"/api/v1/operations/{op['id']}/wait", params={"timeout": 20}).json()
    assert op["status"] == "succeeded", op


def check_download(w: World, r: SweepResult) -> list[str]:
    """One Job made for the download (the uid the operation watched), its files in S3."""
    assert not [e for e in r.ledger if e["action"].startswith(MUTATING_AWS)], r.ledger
    jobs = [j for j in w.kube_items("batch/jobs")
            if (j["metadata"].get("labels") or {}).get("podplane.io/model") == MODEL]
    assert [j["metadata"]["uid"] for j in jobs] == [r.op["result"]["uid"]], jobs
    s3 = w.cloud.aws("s3")
    bucket = r.op["result"]["uri"].split("/")[2]
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=f"models/{MODEL}/")
            .get("Contents", [])]
    assert len(keys) == r.op["result"]["files"] == 3, keys
    assert not [x for x in w.kube_items("secrets") if x["metadata"]["name"].startswith("dl-")]
    return ["no AWS mutation", "1 Job (the uid watched)", "3 objects under models/",
            "token Secret gone"]


def _nccl(api: httpx.Client, key: str) -> httpx.Response:
    """The first group's two nodes, idle again once the endpoint is deleted."""
    nodes = [n["InstanceId"] for n in WORLD.nodes(FIRST_GROUP)]
    return api.post(f"/api/v1/clusters/{CLUSTER}/diagnostics/nccl", json={"nodes": nodes},
                    headers={"Idempotency-Key": key})


def check_nccl(w: World, r: SweepResult) -> list[str]:
    """Resumed after every kill, the test still ends healthy and leaves no workload."""
    assert not [e for e in r.ledger if e["action"].startswith(MUTATING_AWS)], r.ledger
    left = [o["metadata"]["name"] for kind in ("kubeflow.org/pytorchjobs", "pods")
            for o in w.kube_items(kind)
            if (o["metadata"].get("labels") or {}).get("podplane.io/diagnosis") == "nccl"]
    assert left == [], left
    assert r.op["result"]["verdict"]["conclusion"] == "healthy", r.op["result"]
    return ["no AWS mutation", "no PyTorchJob or pod left", "verdict healthy"]


def _reconcile(api: httpx.Client, key: str) -> httpx.Response:
    if "drift" not in WORLD.picked:  # planted once, out of band (as `aws iam` would)
        WORLD.cloud.aws("iam").detach_role_policy(
            RoleName=addon_role_name(CLUSTER, "training", "us-west-2"),
            PolicyArn=TRAINING_OPERATOR_POLICY)
        WORLD.picked["drift"] = "iam-role/training"
    return api.post(f"/api/v1/clusters/{CLUSTER}/reconcile", headers={"Idempotency-Key": key})


def check_reconcile(w: World, r: SweepResult) -> list[str]:
    assert [(e["service"], e["action"]) for e in r.ledger
            if e["action"].startswith(MUTATING_AWS)] == [("iam", "AttachRolePolicy")], r.ledger
    role = addon_role_name(CLUSTER, "training", "us-west-2")
    attached = w.cloud.aws("iam").list_attached_role_policies(RoleName=role)
    assert [p["PolicyArn"] for p in attached["AttachedPolicies"]] == [
        TRAINING_OPERATOR_POLICY]
    return ["1x iam AttachRolePolicy, nothing else", "policy attached again"]


def check_feature(w: World, r: SweepResult) -> list[str]:
    """Tiered checkpointing switched on: its chain made once each (docs/features.md)."""
    assert [(e["service"], e["action"]) for e in r.ledger
            if e["action"].startswith(MUTATING_AWS)] == [
        ("iam", "CreateRole"), ("iam", "PutRolePolicy"),
        ("eks", "CreatePodIdentityAssociation"), ("sagemaker", "UpdateCluster")], r.ledger
    described = w.cloud.aws("sagemaker").describe_cluster(ClusterName=CLUSTER)
    assert described["TieredStorageConfig"] == {
        "Mode": "Enable", "InstanceMemoryAllocationPercentage": 30}
    return ["1x CreateRole, PutRolePolicy, CreatePodIdentityAssociation, UpdateCluster",
            "TieredStorageConfig enabled at 30%"]


def check_import(w: World, r: SweepResult) -> list[str]:
    with w.server.api(w.token) as api:
        w.server.start_sweeping(None)
        got = api.get(f"/api/v1/clusters/{IMPORTED}").json()
        w.server.stop()
    assert got["origin"] == "imported", got
    assert not [e for e in r.ledger if e["service"] in ("ec2", "sagemaker")]
    return ["registered as imported", "no EC2/SageMaker mutation"]


def check_delete(w: World, r: SweepResult) -> list[str]:
    for service, action in (("eks", "DeleteCluster"), ("sagemaker", "DeleteCluster"),
                            ("ec2", "DeleteVpc"), ("ec2", "DeleteNatGateway")):
        assert count(r.ledger, service, action) == 1, (service, action)
    assert CLUSTER not in w.cloud.aws("eks").list_clusters()["clusters"]
    assert not w.cloud.aws("ec2").describe_vpcs(Filters=[
        {"Name": "tag:podplane:cluster", "Values": [CLUSTER]}])["Vpcs"]
    iam = w.cloud.aws("iam")
    for role in role_names(CLUSTER, "us-west-2").values():
        with pytest.raises(iam.exceptions.NoSuchEntityException):
            iam.get_role(RoleName=role)
    return ["1x Delete{Cluster,Vpc,NatGateway}", "EKS gone", "VPC gone", "IAM roles gone"]


DRIVERS: dict[str, tuple[Callable[[httpx.Client, str], httpx.Response], Check]] = {
    "test.touch": (_post("/api/v1/operations/_test", {
        "target": "test/sweep", "params": {"name": "sweep", "poll": 0.05}}), check_touch),
    "cluster.create": (_post("/api/v1/clusters", BODY), check_create),
    "job.submit": (_submit, check_job("job.submit")),
    "job.cancel": (_post(f"{JOBS}/{JOB}/cancel"), check_job("job.cancel")),
    "job.delete": (lambda api, key: api.delete(
        f"{JOBS}/{JOB}", params={"confirm": True}, headers={"Idempotency-Key": key}),
        check_job("job.delete")),
    "endpoint.create": (_post(ENDPOINTS, {"name": ENDPOINT, "instance_group": FIRST_GROUP,
                                          "model": "Qwen/Qwen2.5-0.5B-Instruct"}),
                        check_endpoint("endpoint.create")),
    "endpoint.update": (lambda api, key: api.patch(
        f"{ENDPOINTS}/{ENDPOINT}", json={"image": NEW_IMAGE}, headers={"Idempotency-Key": key}),
        check_endpoint("endpoint.update")),
    "endpoint.scale": (lambda api, key: api.patch(
        f"{ENDPOINTS}/{ENDPOINT}", json={"replicas": 2}, headers={"Idempotency-Key": key}),
        check_endpoint("endpoint.scale")),
    "endpoint.autoscale": (_autoscale, check_autoscale),
    "endpoint.delete": (lambda api, key: api.delete(
        f"{ENDPOINTS}/{ENDPOINT}", params={"confirm": True}, headers={"Idempotency-Key": key}),
        check_endpoint("endpoint.delete")),
    "model.download": (_post(f"/api/v1/clusters/{CLUSTER}/models", {
        "name": MODEL, "source": "sandbox-models/tiny-chat",
        "hf_token": "hf_SweptSweptSweptSweptSwept012345"}), check_download),
    "pool.create": (_post(POOLS, {"name": POOL, "instance_group": FIRST_GROUP,
                                  "model": "Qwen/Qwen2.5-0.5B-Instruct", "replicas": 2}),
                    check_pool("pool.create")),
    "pool.assign": (_post(f"{POOLS}/{POOL}/assign", {"endpoint": POOL_EP, "pods": 1}),
                    check_pool("pool.assign")),
    "pool.scale": (lambda api, key: api.patch(
        f"{POOLS}/{POOL}", json={"replicas": 1}, headers={"Idempotency-Key": key}),
        check_pool("pool.scale")),
    "pool.delete": (lambda api, key: api.delete(
        f"{POOLS}/{POOL}", params={"confirm": True}, headers={"Idempotency-Key": key}),
        check_pool("pool.delete")),
    "diagnose.nccl": (_nccl, check_nccl),
    # no idle stop: the sweep's clock runs 1,200x, so an hour idle passes in 3 s under load
    "space.create": (_post(SPACES, {"name": SPACE, "cpu": "500m", "memory": "1Gi",
                                    "storage_gib": 5, "idle_minutes": 0}),
                     check_space("space.create")),
    "space.state": (lambda api, key: api.patch(
        f"{SPACES}/{SPACE}", json={"desired": "Stopped"}, headers={"Idempotency-Key": key}),
        check_space("space.state")),
    "space.delete": (lambda api, key: api.delete(
        f"{SPACES}/{SPACE}", headers={"Idempotency-Key": key}), check_space("space.delete")),
    "cluster.reconcile": (_reconcile, check_reconcile),
    "feature.set": (lambda api, key: api.patch(
        f"/api/v1/clusters/{CLUSTER}/features/tiered-checkpointing",
        json={"enabled": True, "settings": {"memory_percent": 30}},
        headers={"Idempotency-Key": key}), check_feature),
    "instance_group.add": (_post(GROUPS, {"name": EXTRA, "instance_type": "ml.m5.xlarge",
                                          "count": 1}), check_group(1)),
    "instance_group.scale": (lambda api, key: api.patch(
        f"{GROUPS}/{EXTRA}", json={"count": 3}, headers={"Idempotency-Key": key}),
        check_group(3)),
    "node.reboot": (_node_start("node.reboot"),
                    check_node("node.reboot", "BatchRebootClusterNodes")),
    "node.replace": (_node_start("node.replace"),
                     check_node("node.replace", "BatchReplaceClusterNodes")),
    "node.delete": (_node_start("node.delete"),
                    check_node("node.delete", "BatchDeleteClusterNodes")),
    "instance_group.delete": (lambda api, key: api.delete(
        f"{GROUPS}/{EXTRA}", params={"confirm": True}, headers={"Idempotency-Key": key}),
        check_group(0)),
    "cluster.import": (_post("/api/v1/clusters/import", {
        "name": IMPORTED, "eks_cluster_name": CLUSTER, "hyperpod_cluster_name": CLUSTER}),
        check_import),
    "cluster.delete": (lambda api, key: api.delete(
        f"/api/v1/clusters/{CLUSTER}", params={"confirm": True},
        headers={"Idempotency-Key": key}), check_delete),
}
# What must be so before a kind is swept, done on a server without crash points.
PREPARE: dict[str, Callable[[httpx.Client, str], None]] = {"pool.delete": _unassign,
                                                           "space.create": _spaces_on}
WORLD: World  # the module's world, for drivers that pick a node when they start


# Each shard's kinds, in the order they run on its world (a kind's state comes from the kinds
# before it in its shard, or from the golden cluster).
SHARDS: dict[str, list[str]] = {
    "create": ["test.touch", "cluster.create"],
    "workloads": ["job.submit", "job.cancel", "job.delete", "endpoint.create",
                  "endpoint.update", "endpoint.scale", "endpoint.autoscale", "endpoint.delete",
                  "model.download", "pool.create", "pool.assign", "pool.scale", "pool.delete",
                  "diagnose.nccl", "space.create", "space.state", "space.delete"],
    "groups": ["cluster.reconcile", "feature.set", "instance_group.add",
               "instance_group.scale", "node.reboot", "node.replace", "node.delete",
               "instance_group.delete"],
    "lifecycle": ["cluster.import", "cluster.delete"],
}


def sweep_kind(world: World, kind: str) -> None:
    """Sweep one kind on the world and assert what the sweep proves."""
    global WORLD
    WORLD = world
    start, check = DRIVERS[kind]
    if kind in PREPARE:
        try:
            assert world.server.start_sweeping(None)
            with world.server.api(world.token, timeout=30) as api:
                PREPARE[kind](api, f"prepare-{kind}")
        finally:
            world.server.stop()
    try:
        result = sweep(world.server, world.cloud, kind, start, world.token,
                       world.tmp / f"{kind}.points")
    except BaseException:
        world.server.stop()  # a server left running blocks the warm parent's next start
        raise
    world.rows.append(result)
    assert result.op["status"] == "succeeded", json.dumps(result.op, indent=1)[-4000:]
    assert result.kills == len(result.points) >= len(result.op["steps"])
    assert not duplicates(result.ledger), duplicates(result.ledger)
    killed_steps = {p.split(":")[0] for p in result.points}
    phased = {s["name"] for s in result.op["steps"] if any(e["phase"] for e in s["history"])}
    assert killed_steps == phased  # every step that records a phase was killed there
    result.quiet = sorted({s["name"] for s in result.op["steps"]} - phased)
    for s in result.op["steps"]:
        assert s["attempt"] == 1, s  # resumed, never restarted as a new attempt
    result.checks = check(world, result)


def shard_module(shard: str) -> tuple[Any, Any]:
    """A shard module's `world` fixture and `test_crash_sweep` (one module per shard, so xdist
    spreads them: `world, test_crash_sweep = shard_module(name)`)."""

    @pytest.fixture(scope="module")
    def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
        with shard_world(tmp_path_factory, shard) as w:
            yield w

    @pytest.mark.parametrize("kind", SHARDS[shard])
    def test_crash_sweep(world: World, kind: str) -> None:
        sweep_kind(world, kind)

    return world, test_crash_sweep
