"""Refused means untouched: every mutating route, driven into each of its refusals (bad input,
busy or existing target, unknown resource, role, missing confirm, pre-flight), answers a
problem+json and leaves the store (every table but the audit log) and the cloud's mutation
ledger exactly as they were.

The routes come from the app's OpenAPI document: a new mutating route fails
`test_every_mutating_route_has_refusals` until its refusals are listed here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, select

from podplane.store import clusters as cluster_rows
from podplane.store.models import Base, OperationModel, StepModel
from podplane_sandbox.aws.iam_rules import LAG_SECONDS
from tests.conftest import client_for
from tests.groups.conftest import (  # noqa: F401
    CLUSTER,
    FIRST_GROUP,
    LIFECYCLE,
    ROLE,
    Cluster,
    cluster,
)
from tests.sandbox_aws.iam_setup import make_role
from tests.stack import Stack

NODES = f"/api/v1/clusters/{CLUSTER}/nodes"
GROUPS = f"/api/v1/clusters/{CLUSTER}/instance-groups"
JOBS = f"/api/v1/clusters/{CLUSTER}/jobs"
FEATURE, FEATURES = "/api/v1/clusters/{cluster}/features/{feature}", \
    f"/api/v1/clusters/{CLUSTER}/features"
ON, OFF = {"enabled": True}, {"enabled": False}
ENDPOINTS = f"/api/v1/clusters/{CLUSTER}/endpoints"
EP_BODY = {"name": "e1", "instance_group": FIRST_GROUP, "model": "Qwen/Qwen2.5-0.5B-Instruct"}
MODELS = "/api/v1/clusters/{cluster}/models"
DL_BODY = {"name": "m1", "source": "org/tiny", "hf_token": "hf_RefusedTokenRefusedToken0123456"}
EP, EP_INVOKE = "/api/v1/clusters/{cluster}/endpoints/{name}", \
    "/api/v1/clusters/{cluster}/endpoints/{name}/invoke"
NCCL = "/api/v1/clusters/{cluster}/diagnostics/nccl"
SPACES, SPACE = f"/api/v1/clusters/{CLUSTER}/spaces", "/api/v1/clusters/{cluster}/spaces/{name}"
SPACE_ROUTES = "/api/v1/clusters/{cluster}/spaces"
TPL, TPLS = "/api/v1/clusters/{cluster}/space-templates/{name}", \
    f"/api/v1/clusters/{CLUSTER}/space-templates"
POOLS, POOL = f"/api/v1/clusters/{CLUSTER}/pools", "/api/v1/clusters/{cluster}/pools/{name}"
POOL_BODY = {"name": "p1", "instance_group": FIRST_GROUP, "model": "Qwen/Qwen2.5-0.5B-Instruct"}
NCCL_BODY = {"nodes": ["i-0123456789abcdef0", "i-0123456789abcdef1"]}
JOB_BODY = {"name": "j1", "recipe": "pytorch-ddp", "instance_group": FIRST_GROUP, "replicas": 1}
PUBLIC_LB = {"exposure": "load_balancer", "public": True, "source_ranges": ["203.0.113.0/24"]}
GOOD_CLUSTER = {"name": "fresh", "region": "us-west-2", "availability_zone": "us-west-2a",
                "instance_type": "ml.g5.8xlarge", "count": 1, "capacity_type": "on-demand"}
# What a refusal may change by design: the audit log records it; authenticating stamps the
# token's last use.
UNTRACKED_TABLES = {"audit"}
UNTRACKED_COLUMNS = {"last_used_at"}


@dataclass(frozen=True)
class Refusal:
    method: str
    route: str  # as the OpenAPI document names it
    why: str
    status: int
    path: str | None = None  # the concrete path (default: the route)
    body: Any = None
    query: dict[str, Any] = field(default_factory=dict)
    role: str | None = "admin"  # None: no credentials
    hold: str | None = None  # a target held by another replica's running operation


def R(method: str, route: str, why: str, status: int, **kw: Any) -> Refusal:  # noqa: N802
    return Refusal(method, route, why, status, **kw)


NODE = "{node}"  # replaced by the cluster's node id
REFUSALS = [
    R("POST", "/api/v1/session", "422 no token", 422, body={}, role=None),
    R("POST", "/api/v1/session", "401 wrong token", 401, body={"token": "pp_wrong"}, role=None),
    R("DELETE", "/api/v1/session", "401 signed out", 401, role=None),
    R("POST", "/api/v1/tokens", "422 bad name", 422, body={"name": "bad\nname",
                                                            "role": "viewer"}),
    R("POST", "/api/v1/tokens", "403 role", 403, body={"name": "new", "role": "viewer"},
      role="viewer"),
    R("POST", "/api/v1/tokens", "409 exists", 409, body={"name": "stack-viewer",
                                                          "role": "viewer"}),
    R("DELETE", "/api/v1/tokens/{name}", "404", 404, path="/api/v1/tokens/nobody"),
    R("DELETE", "/api/v1/tokens/{name}", "403 role", 403, path="/api/v1/tokens/stack-viewer",
      role="viewer"),
    R("POST", "/api/v1/operations/{op_id}/steps/{step}/retry", "404 operation", 404,
      path="/api/v1/operations/op-nope/steps/touch/retry"),
    R("POST", "/api/v1/operations/{op_id}/steps/{step}/retry", "404 step", 404,
      path="/api/v1/operations/{failed}/steps/nope/retry"),
    R("POST", "/api/v1/operations/{op_id}/steps/{step}/retry", "409 not failed", 409,
      path="/api/v1/operations/{done}/steps/touch/retry"),
    R("POST", "/api/v1/operations/{op_id}/steps/{step}/retry", "409 busy (nested)", 409,
      path="/api/v1/operations/{failed}/steps/touch/retry", hold=f"cluster/{CLUSTER}/node/x"),
    R("POST", "/api/v1/operations/{op_id}/steps/{step}/retry", "403 role", 403,
      path="/api/v1/operations/{failed}/steps/touch/retry", role="viewer"),
    R("POST", "/api/v1/operations/{op_id}/cancel", "404", 404,
      path="/api/v1/operations/op-nope/cancel"),
    R("POST", "/api/v1/operations/{op_id}/cancel", "409 finished", 409,
      path="/api/v1/operations/{done}/cancel"),
    R("POST", "/api/v1/operations/{op_id}/cancel", "403 role", 403,
      path="/api/v1/operations/{failed}/cancel", role="viewer"),
    R("POST", "/api/v1/cluster-plans", "422 bad input", 422, body={**GOOD_CLUSTER, "count": 0}),
    R("POST", "/api/v1/clusters", "422 bad input", 422, body={**GOOD_CLUSTER, "name": "Bad_"}),
    R("POST", "/api/v1/clusters", "403 role", 403, body=GOOD_CLUSTER, role="viewer"),
    R("POST", "/api/v1/clusters", "409 busy (creating)", 409,
      body={**GOOD_CLUSTER, "name": "busy"}, hold="cluster/busy"),
    R("POST", "/api/v1/clusters", "422 pre-flight (quota)", 422,
      body={**GOOD_CLUSTER, "instance_type": "ml.p5.48xlarge", "count": 40}),
    R("POST", "/api/v1/clusters/import", "422 bad name", 422, body={"name": "Bad_"}),
    R("POST", "/api/v1/clusters/import", "403 role", 403, body={"name": "x"}, role="viewer"),
    R("POST", "/api/v1/clusters/import", "409 managed", 409, body={"name": CLUSTER}),
    R("DELETE", "/api/v1/clusters/{cluster}", "404", 404, path="/api/v1/clusters/nope"),
    R("DELETE", "/api/v1/clusters/{cluster}", "403 role", 403,
      path=f"/api/v1/clusters/{CLUSTER}", role="viewer"),
    R("DELETE", "/api/v1/clusters/{cluster}", "409 busy (a node)", 409,
      path=f"/api/v1/clusters/{CLUSTER}", query={"confirm": True},
      hold=f"cluster/{CLUSTER}/node/x"),
    R("PUT", "/api/v1/preferences/current-cluster", "404", 404, body={"name": "nope"}),
    R("PUT", "/api/v1/preferences/current-cluster", "422", 422, body={"name": "Bad_"}),
    R("POST", "/api/v1/clusters/{cluster}/instance-groups", "404 cluster", 404,
      path="/api/v1/clusters/nope/instance-groups",
      body={"name": "g2", "instance_type": "ml.m5.xlarge", "count": 1}),
    R("POST", "/api/v1/clusters/{cluster}/instance-groups", "422 bad input", 422, path=GROUPS,
      body={"name": "g2", "instance_type": "ml.m5.xlarge", "count": -1}),
    R("POST", "/api/v1/clusters/{cluster}/instance-groups", "403 role", 403, path=GROUPS,
      body={"name": "g2", "instance_type": "ml.m5.xlarge", "count": 1}, role="viewer"),
    R("POST", "/api/v1/clusters/{cluster}/instance-groups", "409 busy (the cluster)", 409,
      path=GROUPS, body={"name": "g2", "instance_type": "ml.m5.xlarge", "count": 1},
      hold=f"cluster/{CLUSTER}"),
    R("PATCH", "/api/v1/clusters/{cluster}/instance-groups/{group}", "404 group", 404,
      path=f"{GROUPS}/nope", body={"count": 2}),
    R("PATCH", "/api/v1/clusters/{cluster}/instance-groups/{group}", "422 bad count", 422,
      path=f"{GROUPS}/{FIRST_GROUP}", body={"count": -1}),
    R("PATCH", "/api/v1/clusters/{cluster}/instance-groups/{group}", "403 role", 403,
      path=f"{GROUPS}/{FIRST_GROUP}", body={"count": 2}, role="viewer"),
    R("PATCH", "/api/v1/clusters/{cluster}/instance-groups/{group}", "409 busy", 409,
      path=f"{GROUPS}/{FIRST_GROUP}", body={"count": 2}, hold=f"cluster/{CLUSTER}"),
    R("DELETE", "/api/v1/clusters/{cluster}/instance-groups/{group}", "404 group", 404,
      path=f"{GROUPS}/nope", query={"confirm": True}),
    R("DELETE", "/api/v1/clusters/{cluster}/instance-groups/{group}", "403 role", 403,
      path=f"{GROUPS}/{FIRST_GROUP}", query={"confirm": True}, role="viewer"),
    R("DELETE", "/api/v1/clusters/{cluster}/instance-groups/{group}", "409 last group", 409,
      path=f"{GROUPS}/{FIRST_GROUP}", query={"confirm": True}),
    R("DELETE", "/api/v1/clusters/{cluster}/nodes/{node}", "404 node", 404,
      path=f"{NODES}/i-0123456789abcdef0", query={"confirm": True}),
    R("DELETE", "/api/v1/clusters/{cluster}/nodes/{node}", "403 role", 403,
      path=f"{NODES}/{NODE}", query={"confirm": True}, role="viewer"),
    R("DELETE", "/api/v1/clusters/{cluster}/nodes/{node}", "428 confirm", 428,
      path=f"{NODES}/{NODE}"),
    R("DELETE", "/api/v1/clusters/{cluster}/nodes/{node}", "409 busy (the cluster)", 409,
      path=f"{NODES}/{NODE}", query={"confirm": True}, hold=f"cluster/{CLUSTER}"),
    R("POST", "/api/v1/clusters/{cluster}/nodes/{node}/reboot", "404 node", 404,
      path=f"{NODES}/i-0123456789abcdef0/reboot"),
    R("POST", "/api/v1/clusters/{cluster}/nodes/{node}/reboot", "403 role", 403,
      path=f"{NODES}/{NODE}/reboot", role="viewer"),
    R("POST", "/api/v1/clusters/{cluster}/nodes/{node}/reboot", "409 busy (the cluster)", 409,
      path=f"{NODES}/{NODE}/reboot", hold=f"cluster/{CLUSTER}"),
    R("POST", "/api/v1/clusters/{cluster}/nodes/{node}/replace", "404 node", 404,
      path=f"{NODES}/i-0123456789abcdef0/replace", query={"confirm": True}),
    R("POST", "/api/v1/clusters/{cluster}/nodes/{node}/replace", "403 role", 403,
      path=f"{NODES}/{NODE}/replace", query={"confirm": True}, role="viewer"),
    R("POST", "/api/v1/clusters/{cluster}/nodes/{node}/replace", "428 confirm", 428,
      path=f"{NODES}/{NODE}/replace"),
    R("POST", "/api/v1/clusters/{cluster}/nodes/{node}/replace", "409 busy (the cluster)", 409,
      path=f"{NODES}/{NODE}/replace", query={"confirm": True}, hold=f"cluster/{CLUSTER}"),
    R("POST", "/api/v1/clusters/{cluster}/nodes/{node}/replace", "409 busy (the node)", 409,
      path=f"{NODES}/{NODE}/replace", query={"confirm": True},
      hold=f"cluster/{CLUSTER}/node/{NODE}"),
    R("POST", "/api/v1/clusters/{cluster}/jobs", "404 cluster", 404,
      path="/api/v1/clusters/nope/jobs", body=JOB_BODY),
    R("POST", "/api/v1/clusters/{cluster}/jobs", "422 bad name", 422, path=JOBS,
      body={**JOB_BODY, "name": "Bad_Name"}),
    R("POST", "/api/v1/clusters/{cluster}/jobs", "422 shell in a parameter", 422, path=JOBS,
      body={**JOB_BODY, "params": {"dataset": "/data/x <(touch pwned)"}}, role="operator"),
    R("POST", "/api/v1/clusters/{cluster}/jobs", "403 role", 403, path=JOBS, body=JOB_BODY,
      role="viewer"),
    R("POST", "/api/v1/clusters/{cluster}/jobs/{job}/cancel", "404 cluster", 404,
      path="/api/v1/clusters/nope/jobs/j1/cancel"),
    R("POST", "/api/v1/clusters/{cluster}/jobs/{job}/cancel", "403 role", 403,
      path=f"{JOBS}/j1/cancel", role="viewer"),
    R("DELETE", "/api/v1/clusters/{cluster}/jobs/{job}", "404 job", 404,
      path=f"{JOBS}/j1", query={"confirm": True}),
    R("DELETE", "/api/v1/clusters/{cluster}/jobs/{job}", "403 role", 403,
      path=f"{JOBS}/j1", query={"confirm": True}, role="operator"),
    R("POST", NCCL, "404 cluster", 404, path="/api/v1/clusters/nope/diagnostics/nccl",
      body=NCCL_BODY, role="operator"),
    R("POST", NCCL, "422 one node", 422, path=NCCL.format(cluster=CLUSTER),
      body={"nodes": NCCL_BODY["nodes"][:1]}, role="operator"),
    # this cluster has no Kubeflow training operator: no PyTorchJob kind to run the test
    R("POST", NCCL, "409 no training operator", 409, path=NCCL.format(cluster=CLUSTER),
      body=NCCL_BODY, role="operator"),
    R("POST", NCCL, "403 role", 403, path=NCCL.format(cluster=CLUSTER), body=NCCL_BODY,
      role="viewer"),
    R("POST", "/api/v1/clusters/{cluster}/reconcile", "404 cluster", 404,
      path="/api/v1/clusters/nope/reconcile"),
    R("POST", "/api/v1/clusters/{cluster}/reconcile", "403 role", 403,
      path=f"/api/v1/clusters/{CLUSTER}/reconcile", role="viewer"),
    *(R(method, FEATURE, why, code, path=path, body=body, role=role)
      for method in ("PATCH", "PUT")
      for why, code, path, body, role in (
          ("404 cluster", 404, "/api/v1/clusters/nope/features/kuberay", ON, "operator"),
          ("422 unknown feature", 422, f"{FEATURES}/nope", ON, "operator"),
          ("403 role", 403, f"{FEATURES}/kuberay", ON, "viewer"),
          ("422 bad setting", 422, f"{FEATURES}/tiered-checkpointing",
           {**ON, "settings": {"memory_percent": 0}}, "operator"),
          # the cluster runs HyperPod autoscaling (_autoscaling_on): off terminates nodes
          ("403 role (terminates nodes)", 403, f"{FEATURES}/managed-autoscaling", OFF,
           "operator"),
          ("428 confirm (terminates nodes)", 428, f"{FEATURES}/managed-autoscaling", OFF,
           "admin"))),
    R("POST", FEATURE + "/plan", "404 cluster", 404,
      path="/api/v1/clusters/nope/features/kuberay/plan", body=ON),
    R("POST", "/api/v1/clusters/{cluster}/endpoints", "404 cluster", 404,
      path="/api/v1/clusters/nope/endpoints", body=EP_BODY),
    R("POST", "/api/v1/clusters/{cluster}/endpoints", "422 bad name", 422, path=ENDPOINTS,
      body={**EP_BODY, "name": "Bad_Name"}),
    R("POST", "/api/v1/clusters/{cluster}/endpoints", "422 TP > GPUs per node", 422,
      path=ENDPOINTS, body={**EP_BODY, "tensor_parallel": 2}),
    # issue 34: an internet-facing load balancer is an admin's, with ranges and confirm
    R("POST", "/api/v1/clusters/{cluster}/endpoints", "403 role (public)", 403,
      path=ENDPOINTS, body={**EP_BODY, **PUBLIC_LB}, role="operator"),
    R("POST", "/api/v1/clusters/{cluster}/endpoints", "422 public without ranges", 422,
      path=ENDPOINTS, body={**EP_BODY, **PUBLIC_LB, "source_ranges": []}),
    R("POST", "/api/v1/clusters/{cluster}/endpoints", "428 confirm (public)", 428,
      path=ENDPOINTS, body={**EP_BODY, **PUBLIC_LB}),
    R("POST", "/api/v1/clusters/{cluster}/endpoints", "403 role", 403, path=ENDPOINTS,
      body=EP_BODY, role="viewer"),
    R("POST", SPACE_ROUTES, "409 spaces off", 409, path=SPACES, body={"name": "s1"}),
    R("POST", SPACE_ROUTES, "422 name", 422, path=SPACES, body={"name": "Bad_Name"}),
    R("POST", SPACE_ROUTES, "403 role", 403, path=SPACES, body={"name": "s1"}, role="viewer"),
    R("PATCH", SPACE, "404 space", 404, path=f"{SPACES}/s1", body={"desired": "Stopped"}),
    R("PATCH", SPACE, "422 desired", 422, path=f"{SPACES}/s1", body={"desired": "Paused"}),
    R("PATCH", SPACE, "403 role", 403, path=f"{SPACES}/s1", body={"desired": "Stopped"},
      role="viewer"),
    R("DELETE", SPACE, "404 space", 404, path=f"{SPACES}/s1"),
    R("DELETE", SPACE, "403 role", 403, path=f"{SPACES}/s1", role="viewer"),
    R("POST", SPACE + "/open", "404 space", 404, path=f"{SPACES}/s1/open"),
    R("POST", SPACE + "/open", "403 role", 403, path=f"{SPACES}/s1/open", role="viewer"),
    R("PUT", TPL, "409 spaces off", 409, path=f"{TPLS}/t1", body={}),
    R("PUT", TPL, "422 max_gpus", 422, path=f"{TPLS}/t1", body={"max_gpus": 99}),
    R("PUT", TPL, "422 another name", 422, path=f"{TPLS}/t1", body={"name": "t2"}),
    R("PUT", TPL, "403 role", 403, path=f"{TPLS}/t1", body={}, role="operator"),
    R("DELETE", TPL, "409 spaces off", 409, path=f"{TPLS}/t1"),
    R("DELETE", TPL, "403 role", 403, path=f"{TPLS}/t1", role="operator"),
    R("PATCH", EP, "404 endpoint", 404, path=f"{ENDPOINTS}/e1", body={"replicas": 2}),
    R("PATCH", EP, "422 replicas", 422, path=f"{ENDPOINTS}/e1", body={"replicas": -1}),
    R("PATCH", EP, "403 role", 403, path=f"{ENDPOINTS}/e1", body={"replicas": 2},
      role="viewer"),
    R("PATCH", EP, "404 endpoint (update)", 404, path=f"{ENDPOINTS}/e1", body={"dtype": "float16"}),
    R("PATCH", EP, "422 scale and update at once", 422, path=f"{ENDPOINTS}/e1",
      body={"replicas": 2, "image": "docker.io/vllm/vllm-openai:latest"}),
    R("PATCH", EP, "403 role (update)", 403, path=f"{ENDPOINTS}/e1", body={"tensor_parallel": 1},
      role="viewer"),
    R("DELETE", EP, "404 endpoint", 404, path=f"{ENDPOINTS}/e1", query={"confirm": True}),
    R("DELETE", EP, "403 role", 403, path=f"{ENDPOINTS}/e1", query={"confirm": True},
      role="operator"),
    R("POST", EP_INVOKE, "404 endpoint", 404, path=f"{ENDPOINTS}/e1/invoke",
      body={"prompt": "hi"}),
    R("POST", EP_INVOKE, "422 empty prompt", 422, path=f"{ENDPOINTS}/e1/invoke",
      body={"prompt": ""}),
    R("POST", EP_INVOKE, "403 role", 403, path=f"{ENDPOINTS}/e1/invoke",
      body={"prompt": "hi"}, role="viewer"),
    R("POST", "/api/v1/clusters/{cluster}/pools", "422 TP > GPUs per node", 422, path=POOLS,
      body={**POOL_BODY, "tensor_parallel": 2}),
    R("POST", "/api/v1/clusters/{cluster}/pools", "403 role", 403, path=POOLS,
      body=POOL_BODY, role="viewer"),
    R("PATCH", POOL, "404 pool", 404, path=f"{POOLS}/p1", body={"replicas": 0}),
    R("PATCH", POOL, "403 role", 403, path=f"{POOLS}/p1", body={"replicas": 0},
      role="viewer"),
    R("POST", POOL + "/assign", "404 pool", 404, path=f"{POOLS}/p1/assign",
      body={"endpoint": "e1"}),
    R("POST", POOL + "/assign", "422 pods", 422, path=f"{POOLS}/p1/assign",
      body={"endpoint": "e1", "pods": -1}),
    R("DELETE", POOL, "404 pool", 404, path=f"{POOLS}/p1", query={"confirm": True}),
    R("DELETE", POOL, "403 role", 403, path=f"{POOLS}/p1", query={"confirm": True},
      role="operator"),
    R("POST", MODELS, "404 cluster", 404, path="/api/v1/clusters/nope/models",
      body=DL_BODY),
    R("POST", MODELS, "422 bad name", 422, path=MODELS.format(cluster=CLUSTER),
      body={**DL_BODY, "name": "Bad_Name"}),
    R("POST", MODELS, "409 no shared bucket (this cluster)", 409,
      path=MODELS.format(cluster=CLUSTER), body=DL_BODY),
    R("POST", MODELS, "403 role", 403, path=MODELS.format(cluster=CLUSTER), body=DL_BODY,
      role="viewer"),
]


def mutating_routes(app: Any) -> set[tuple[str, str]]:
    return {(m.upper(), p) for p, ms in app.openapi()["paths"].items() for m in ms
            if m in ("post", "put", "patch", "delete")}


async def dump(app: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table but the audit log (columns a refusal may stamp left out)."""
    out = {}
    async with app.state.podplane.sessions() as db:
        for table in Base.metadata.sorted_tables:
            if table.name in UNTRACKED_TABLES:
                continue
            cols = [c for c in table.columns if c.name not in UNTRACKED_COLUMNS]
            rows = (await db.execute(select(*cols))).all()
            out[table.name] = sorted((tuple(r) for r in rows), key=repr)
    return out


async def _op(app: Any, target: str, status: str, *, held: bool) -> str:
    """An operation row as another replica would leave it: held ones are running under that
    replica's live lease (this process never claims it), the rest are finished."""
    now = datetime.now(UTC)
    op_id = f"op-{status}-{abs(hash(target)) % 10**8}"
    row = OperationModel(
        id=op_id, kind="test.touch", target=target, status=status, requested_face="api",
        requested_by="other", request_hash="x", params={"name": "x"}, mutating=True,
        cancel_requested=False,
        active_target=target if held else None, revision=1, created_at=now, updated_at=now,
        lease_owner="other-host:1:aa/bb" if held else None,
        lease_expires_at=now + timedelta(hours=1) if held else None,
        error={"step": "touch", "code": "x", "message": "x", "hint": None}
        if status == "failed" else None)
    async with app.state.podplane.sessions.begin() as db:
        db.add(row)
        await db.flush()
        db.add(StepModel(operation_id=op_id, idx=0, name="touch", status=status, attempt=1))
    return op_id


async def _drop(app: Any, op_id: str) -> None:
    async with app.state.podplane.sessions.begin() as db:
        await db.execute(delete(StepModel).where(StepModel.operation_id == op_id))
        await db.execute(delete(OperationModel).where(OperationModel.id == op_id))


def test_every_mutating_route_has_refusals(stack: Stack) -> None:
    listed = {(r.method, r.route) for r in REFUSALS}
    missing = mutating_routes(stack.app) - listed
    assert not missing, f"mutating routes without refusal cases: {sorted(missing)}"
    assert listed <= mutating_routes(stack.app)


def _autoscaling_on(cluster: Cluster) -> None:  # noqa: F811
    """HyperPod's managed Karpenter switched on behind podplane's back (no NodePool yet):
    switching it off is a destroy whatever podplane recorded (services/features)."""
    sm = cluster.stack.aws("sagemaker")
    groups = [{"InstanceGroupName": g["InstanceGroupName"], "InstanceType": g["InstanceType"],
               "InstanceCount": g["TargetCount"], "LifeCycleConfig": LIFECYCLE,
               "ExecutionRole": ROLE, "ThreadsPerCore": 1}
              for g in cluster.describe()["InstanceGroups"]]
    # a role HyperPod may assume (sagemaker-hyperpod-eks-autoscaling-iam), once IAM propagated
    scaler = make_role(cluster.stack.aws, "scaler", ("hyperpod.sagemaker.amazonaws.com",))
    cluster.stack.advance(LAG_SECONDS)
    sm.update_cluster(ClusterName=CLUSTER, InstanceGroups=groups, ClusterRole=scaler,
                      NodeProvisioningMode="Continuous",
                      AutoScaling={"Mode": "Enable", "AutoScalerType": "Karpenter"})
    cluster.stack.advance(10 * 60)
    assert cluster.describe()["AutoScaling"]["Mode"] == "Enable"


async def test_refused_requests_change_nothing(stack: Stack, cluster: Cluster) -> None:  # noqa: F811
    app = stack.app
    _autoscaling_on(cluster)
    node = cluster.nodes_of(FIRST_GROUP)[0]["InstanceId"]
    failed = await _op(app, f"cluster/{CLUSTER}", "failed", held=False)
    done = await _op(app, "cluster/other", "succeeded", held=False)
    async with app.state.podplane.sessions.begin() as db:  # a create in progress, with facts
        await cluster_rows.upsert(db, "busy", region="us-west-2", eks_cluster_name="busy",
                                  hyperpod_cluster_name=None, origin="created",
                                  state="creating", spec={}, facts={"network": {"vpc_id": "v"}})
    pairs: list[tuple[str, str, str]] = []
    problems: list[str] = []
    for r in REFUSALS:
        hold = r.hold.format(node=node) if r.hold else None
        holder = await _op(app, hold, "running", held=True) if hold else None
        path = (r.path or r.route).format(node=node, failed=failed, done=done)
        before, ledger = await dump(app), stack.ledger()
        headers = {"Idempotency-Key": f"refused-{len(pairs)}"}
        client = stack.client(r.role) if r.role else client_for(app, None)
        async with client as c:
            answer = await c.request(r.method, path, json=r.body, params=r.query,
                                     headers=headers)
        where = f"{r.method} {path} ({r.why})"
        problems += _judge(r, answer, holder, where)
        if await dump(app) != before:
            problems.append(f"{where} changed the store")
        if stack.ledger() != ledger:
            problems.append(f"{where} changed the cloud")
        if holder:
            await _drop(app, holder)
        pairs.append((r.method, r.route, r.why))
    print(f"\nrefusals: {len(pairs)} (route, refusal) pairs over "
          f"{len({p[:2] for p in pairs})} mutating routes, store and ledger unchanged")
    assert not problems, "\n".join(problems)
    assert len(pairs) == len(REFUSALS)


def _judge(r: Refusal, answer: Any, holder: str | None, where: str) -> list[str]:
    if answer.status_code != r.status:
        return [f"{where}: {answer.status_code} {answer.text[:300]}"]
    if not answer.headers["content-type"].startswith("application/problem+json"):
        return [f"{where}: not problem+json"]
    body = answer.json()
    if not body.get("code"):
        return [f"{where}: no code"]
    if r.hold and r.status == 409 and body.get("operation_id") != holder:
        return [f"{where}: names {body.get('operation_id')}, not the holder {holder}"]
    return []
