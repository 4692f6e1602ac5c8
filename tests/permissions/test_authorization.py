"""Who may do what, as one table per face: every route, every MCP tool, every operation kind
(start, retry, cancel), each against viewer, operator and admin.

The tables are written out here and compared with what the app declares, so a new route,
tool or kind without a row fails `test_*_table_covers_*`. Each cell is then tried for real
(REST through the ASGI app, MCP through its server) and every refusal is checked to leave
exactly one audit row naming the principal and the face it came through.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.routing import APIRoute, APIWebSocketRoute, iter_route_contexts
from fastapi.testclient import TestClient

from podplane.bootstrap import build_app
from podplane.domain.effects import Effect, Role
from podplane.mcp import server as mcp_server
from podplane.mcp.rest import Caller, in_process_client
from podplane.mcp.tools import BY_NAME, TOOLS
from podplane.services.access.authority import KINDS, Authority
from podplane.services.operations import engine_of
from podplane.services.registry import REGISTRY, ServiceSpec
from podplane.settings import Settings
from podplane.store import clusters as cluster_rows
from tests.conftest import mint
from tests.fakes.cloud import Fakes

V, O, A = Role.VIEWER, Role.OPERATOR, Role.ADMIN  # noqa: E741  (a table reads better short)
PUBLIC = None
ANY_TOKEN = V  # signed in with any role
ROLES = (V, O, A)

# (method, path) -> the least role that may call it; PUBLIC needs no token.
ROUTES: dict[tuple[str, str], Role | None] = {
    ("GET", "/api/v1/health"): PUBLIC,
    ("POST", "/api/v1/session"): PUBLIC,
    ("GET", "/api/docs"): PUBLIC,
    ("GET", "/api/docs/assets/{name}"): PUBLIC,
    ("GET", "/api/v1/session"): ANY_TOKEN,
    ("DELETE", "/api/v1/session"): ANY_TOKEN,
    ("GET", "/api/v1/tokens"): A,
    ("POST", "/api/v1/tokens"): A,
    ("DELETE", "/api/v1/tokens/{name}"): A,
    ("GET", "/api/v1/audit"): V,
    ("GET", "/api/v1/operations"): V,
    ("GET", "/api/v1/operations/{op_id}"): V,
    ("GET", "/api/v1/operations/{op_id}/wait"): V,
    ("POST", "/api/v1/operations/{op_id}/steps/{step}/retry"): O,  # and the kind's role
    ("POST", "/api/v1/operations/{op_id}/cancel"): O,  # and the kind's role
    ("WS", "/api/v1/operations/{op_id}/events"): V,
    ("POST", "/api/v1/cluster-plans"): V,
    ("POST", "/api/v1/clusters"): O,
    ("GET", "/api/v1/clusters"): V,
    ("POST", "/api/v1/clusters/import"): A,
    ("GET", "/api/v1/clusters/{cluster}"): V,
    ("DELETE", "/api/v1/clusters/{cluster}"): A,
    ("GET", "/api/v1/preferences/current-cluster"): V,
    ("PUT", "/api/v1/preferences/current-cluster"): V,
    ("GET", "/api/v1/availability-zones"): V,
    ("GET", "/api/v1/instance-types"): V,
    ("GET", "/api/v1/quotas"): V,
    ("GET", "/api/v1/training-plans"): V,
    ("GET", "/api/v1/clusters/{cluster}/instance-groups"): V,
    ("GET", "/api/v1/clusters/{cluster}/instance-groups/{group}"): V,
    ("POST", "/api/v1/clusters/{cluster}/instance-groups"): O,
    ("PATCH", "/api/v1/clusters/{cluster}/instance-groups/{group}"): O,  # down: A (below)
    ("DELETE", "/api/v1/clusters/{cluster}/instance-groups/{group}"): A,
    ("GET", "/api/v1/clusters/{cluster}/nodes"): V,
    ("GET", "/api/v1/clusters/{cluster}/nodes/{node}"): V,
    ("POST", "/api/v1/clusters/{cluster}/nodes/{node}/reboot"): O,
    ("POST", "/api/v1/clusters/{cluster}/nodes/{node}/replace"): A,
    ("DELETE", "/api/v1/clusters/{cluster}/nodes/{node}"): A,
    ("GET", "/api/v1/doctor"): V,
    ("GET", "/api/v1/clusters/{cluster}/diagnostics/nodes/{node}"): V,
    ("GET", "/api/v1/operations/{op_id}/diagnosis"): V,
    ("GET", "/api/v1/clusters/{cluster}/diagnostics/jobs/{job}"): V,
    ("GET", "/api/v1/clusters/{cluster}/diagnostics/endpoints/{name}"): V,
    ("POST", "/api/v1/clusters/{cluster}/diagnostics/nccl"): O,  # runs a test workload
    ("GET", "/api/v1/clusters/{cluster}/diagnostics/nccl/{op_id}"): V,
    ("POST", "/api/v1/clusters/{cluster}/reconcile"): O,  # repairs only, never deletes
    ("GET", "/api/v1/recipes"): V,
    ("GET", "/api/v1/clusters/{cluster}/jobs"): V,
    ("POST", "/api/v1/clusters/{cluster}/jobs"): O,
    ("GET", "/api/v1/clusters/{cluster}/jobs/{job}"): V,
    ("GET", "/api/v1/clusters/{cluster}/jobs/{job}/logs"): V,
    ("GET", "/api/v1/clusters/{cluster}/jobs/{job}/events"): V,
    ("POST", "/api/v1/clusters/{cluster}/jobs/{job}/cancel"): O,
    ("DELETE", "/api/v1/clusters/{cluster}/jobs/{job}"): A,
    ("WS", "/api/v1/clusters/{cluster}/jobs/{job}/logs/stream"): V,
    ("GET", "/api/v1/clusters/{cluster}/endpoints"): V,
    ("POST", "/api/v1/clusters/{cluster}/endpoints"): O,
    ("GET", "/api/v1/clusters/{cluster}/endpoints/{name}"): V,
    ("PATCH", "/api/v1/clusters/{cluster}/endpoints/{name}"): O,
    ("DELETE", "/api/v1/clusters/{cluster}/endpoints/{name}"): A,
    ("POST", "/api/v1/clusters/{cluster}/endpoints/{name}/invoke"): O,  # spends GPU time
    ("GET", "/api/v1/clusters/{cluster}/endpoints/{name}/logs"): V,
    ("GET", "/api/v1/clusters/{cluster}/spaces"): V,
    ("POST", "/api/v1/clusters/{cluster}/spaces"): O,
    ("GET", "/api/v1/clusters/{cluster}/spaces/{name}"): V,
    ("PATCH", "/api/v1/clusters/{cluster}/spaces/{name}"): O,
    ("DELETE", "/api/v1/clusters/{cluster}/spaces/{name}"): O,  # admin to delete its home
    ("GET", "/api/v1/clusters/{cluster}/spaces/{name}/logs"): V,
    ("GET", "/api/v1/clusters/{cluster}/spaces/{name}/files"): O,  # runs as the space
    ("POST", "/api/v1/clusters/{cluster}/spaces/{name}/open"): O,
    ("GET", "/api/v1/clusters/{cluster}/space-templates"): V,
    ("PUT", "/api/v1/clusters/{cluster}/space-templates/{name}"): A,
    ("DELETE", "/api/v1/clusters/{cluster}/space-templates/{name}"): A,
    ("GET", "/api/v1/clusters/{cluster}/pools"): V,
    ("POST", "/api/v1/clusters/{cluster}/pools"): O,
    ("GET", "/api/v1/clusters/{cluster}/pools/{name}"): V,
    ("PATCH", "/api/v1/clusters/{cluster}/pools/{name}"): O,
    ("POST", "/api/v1/clusters/{cluster}/pools/{name}/assign"): O,
    ("DELETE", "/api/v1/clusters/{cluster}/pools/{name}"): A,
    ("GET", "/api/v1/clusters/{cluster}/models"): V,
    ("POST", "/api/v1/clusters/{cluster}/models"): O,
    ("GET", "/api/v1/clusters/{cluster}/features"): V,
    ("GET", "/api/v1/clusters/{cluster}/features/{feature}"): V,
    ("POST", "/api/v1/clusters/{cluster}/features/{feature}/plan"): V,
    ("PATCH", "/api/v1/clusters/{cluster}/features/{feature}"): O,
    ("PUT", "/api/v1/clusters/{cluster}/features/{feature}"): O,
}

# MCP tool -> the least role that may call it (and sees it in tools/list).
TOOL_ROLES: dict[str, Role] = {
    "operation_list": V, "operation_get": V, "operation_wait": V,
    "operation_retry_step": O, "operation_cancel": O, "audit_list": V,
    "token_list": A, "token_revoke": A,
    "cluster_list": V, "cluster_get_status": V, "cluster_plan_create": V, "cluster_create": O,
    "cluster_import": A, "cluster_delete": A,
    "region_list_azs": V, "instance_type_list": V, "quota_get": V, "training_plan_list": V,
    "doctor_run": V, "diagnose_node": V, "diagnose_operation": V, "diagnose_job": V,
    "diagnose_endpoint": V,
    "diagnose_nccl": O,
    "instance_group_list": V, "instance_group_get": V, "instance_group_add": O,
    "instance_group_scale": O, "instance_group_delete": A,
    "node_list": V, "node_describe": V, "node_reboot": O, "node_replace": A, "node_delete": A,
    "cluster_reconcile": O,
    "job_recipes": V, "job_list": V, "job_submit": O, "job_get": V, "job_logs": V,
    "job_events": V, "job_cancel": O, "job_delete": A,
    "endpoint_create": O, "endpoint_list": V, "endpoint_get": V, "endpoint_scale": O,
    "endpoint_delete": A, "endpoint_invoke": O, "endpoint_logs": V, "endpoint_update": O,
    "space_create": O, "space_list": V, "space_get": V, "space_set": O, "space_delete": O,
    "space_files": O, "space_logs": V, "space_template_list": V, "space_template_set": A,
    "pool_scale": O, "pool_assign": O, "model_download": O, "model_list": V,
    "feature_list": V, "feature_get": V, "feature_plan": V, "feature_set": O,
}

# Operation kind -> the authority retrying or cancelling it needs (scale: see below). Kinds
# whose start's plan decides whether they destroy fall back to a destroy without a start row.
PLAN_DECIDES = {"instance_group.scale": O, "feature.set": O, "pool.assign": O,
                "space.delete": O}
KIND_TABLE: dict[str, tuple[Role, bool]] = {
    "cluster.create": (O, False), "cluster.import": (A, False), "cluster.delete": (A, True),
    "instance_group.add": (O, False), "instance_group.scale": (A, True),
    "instance_group.delete": (A, True),
    "node.reboot": (O, False), "node.replace": (A, True), "node.delete": (A, True),
    "cluster.reconcile": (O, False), "feature.set": (A, True),
    "job.submit": (O, False), "job.cancel": (O, False), "job.delete": (A, True),
    "endpoint.create": (O, False), "endpoint.scale": (O, False),
    "endpoint.autoscale": (O, False),
    "endpoint.delete": (A, True), "endpoint.update": (O, False),
    "pool.create": (O, False), "pool.scale": (O, False), "pool.assign": (A, True),
    "pool.delete": (A, True), "model.download": (O, False),
    "diagnose.nccl": (O, False),
    "space.create": (O, False), "space.state": (O, False), "space.delete": (A, True),
}


def _fill(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "x1", path)


def _spec(route: Any) -> ServiceSpec | None:
    stack = list(route.dependant.dependencies)
    while stack:
        dep = stack.pop()
        spec = getattr(dep.call, "__podplane_service__", None)
        if spec is not None:
            return spec  # type: ignore[no-any-return]
        stack.extend(dep.dependencies)
    return None


def _app_routes(app: Any) -> dict[tuple[str, str], ServiceSpec | None]:
    found: dict[tuple[str, str], ServiceSpec | None] = {}
    for rc in iter_route_contexts(app.routes):
        route = rc.original_route
        if isinstance(route, APIWebSocketRoute):
            found[("WS", rc.path)] = _spec(route)
        elif isinstance(route, APIRoute) and rc.path.startswith("/api/"):
            for method in route.methods - {"HEAD"}:
                found[(method, rc.path)] = _spec(route)
    return found


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    home = tmp_path_factory.mktemp("authz")
    with pytest.MonkeyPatch.context() as env:  # the test kit's route is not in the table
        env.delenv("PODPLANE_TEST_WORKFLOWS", raising=False)
        app = build_app(Settings(home=home, database_url=f"sqlite:///{home}/db.sqlite"))
    # A fake's shape may upset a read past the role check (a 500): only 401/403 matter here.
    with TestClient(app, base_url="http://127.0.0.1:3099", raise_server_exceptions=False) as c:
        app.state.podplane.cloud = Fakes().cloud()  # answers at once, from memory
        yield c


@pytest.fixture(scope="module")
def tokens(client: TestClient) -> dict[Role, str]:
    async def all_roles() -> dict[Role, str]:
        return {r: await mint(client.app, f"authz-{r.value}", r) for r in Role}

    assert client.portal is not None
    return client.portal.call(all_roles)


def _as(tokens: dict[Role, str], role: Role) -> dict[str, str]:
    return {"Authorization": f"Bearer {tokens[role]}"}


def _audit(client: TestClient, tokens: dict[Role, str]) -> list[dict[str, Any]]:
    rows = client.get("/api/v1/audit", params={"limit": 1000}, headers=_as(tokens, A)).json()
    return rows  # type: ignore[no-any-return]


def test_route_table_covers_every_route_and_matches_the_services(client: TestClient) -> None:
    declared = _app_routes(client.app)
    assert set(declared) == set(ROUTES), "add a row to ROUTES for each new route"
    for key, spec in declared.items():
        if spec is not None:
            assert spec.role is ROUTES[key], (key, spec.action)


def test_every_route_by_every_role(client: TestClient, tokens: dict[Role, str]) -> None:
    """403 below the row's role (with one audit row each, face `api`), never 401/403 at or
    above it, 401 without a token."""
    before = len(_audit(client, tokens))
    refusals = cells = 0
    specs, anonymous = _app_routes(client.app), set()
    for (method, path), needed in sorted(ROUTES.items(), key=str):
        if method == "WS" or needed is PUBLIC:
            continue
        anon = client.request(method, _fill(path), json={})
        assert anon.status_code == 401, (method, path)
        if (spec := specs[(method, path)]) is not None:   # the others: "METHOD /path"
            anonymous.add(spec.action)
        for role in ROLES:
            r = client.request(method, _fill(path), json={}, headers=_as(tokens, role))
            cells += 1
            if role.allows(needed):
                assert r.status_code not in (401, 403), (method, path, role, r.text)
            else:
                assert r.status_code == 403 and r.json()["code"] == "forbidden", (method, path)
                refusals += 1
    rows = _audit(client, tokens)[: len(_audit(client, tokens)) - before]
    refused = [a for a in rows if a["result"] in ("error:forbidden", "error:unauthenticated")]
    assert sum(a["result"] == "error:forbidden" for a in refused) == refusals
    # nobody recognised: coalesced per address, action and second (ADR 0016's sibling, S4),
    # so each action refused shows at least once, never more often than it was refused
    unknown = [a["action"] for a in refused if a["result"] == "error:unauthenticated"]
    assert {a for a in unknown if " " not in a} == anonymous and len(unknown) <= len(ROUTES)
    assert {a["face"] for a in refused} == {"api"}
    assert {a["principal"] for a in refused if a["result"] == "error:forbidden"} == {
        "authz-viewer", "authz-operator"}
    assert cells == 3 * sum(1 for (m, _), n in ROUTES.items() if m != "WS" and n is not PUBLIC)


def test_tool_table_covers_every_tool(client: TestClient) -> None:
    assert {t.name for t in TOOLS} == set(TOOL_ROLES), "add a row to TOOL_ROLES per new tool"
    for tool in TOOLS:
        assert tool.role is TOOL_ROLES[tool.name], tool.name
        assert tool.needs_confirmation is (tool.effect is Effect.DESTROY)


def _caller(client: TestClient, tokens: dict[Role, str], role: Role) -> Caller:
    return Caller(role, lambda: in_process_client(client.app, tokens[role]))


def test_every_tool_by_every_role(client: TestClient, tokens: dict[Role, str]) -> None:
    """A role below the tool's is refused by the control plane (the call is sent on) and
    audited once, as `agent`."""
    from podplane.mcp.http import McpHttp

    face = McpHttp(client.app, client.app.state.podplane)

    async def run() -> list[tuple[str, Role, bool, str | None]]:
        seen = []
        for tool in TOOLS:
            for role in ROLES:
                caller = await _mounted_caller(face, tokens[role])
                args = {**{k: "x1" for k in tool.path_params}, "confirm": True} \
                    if tool.needs_confirmation else {k: "x1" for k in tool.path_params}
                result = await mcp_server.call(tool.name, args, caller)
                code = (result.structured_content or {}).get("error", {}).get("code") \
                    if result.is_error else None
                seen.append((tool.name, role, role.allows(tool.role), code))
        return seen

    before = len(_audit(client, tokens))
    assert client.portal is not None
    seen = client.portal.call(run)
    assert len(seen) == len(TOOLS) * 3
    for name, role, allowed, code in seen:
        assert (code == "forbidden") is (not allowed), (name, role, code)
    rows = _audit(client, tokens)[: len(_audit(client, tokens)) - before]
    refused = sorted((a["principal"], a["action"], a["target"]) for a in rows
                     if a["result"] == "error:forbidden" and a["face"] == "agent")
    # The control plane refused each (its one role check), one row each, naming the route.
    assert refused == sorted((f"authz-{role.value}", BY_NAME[name].spec.action,
                              _fill(BY_NAME[name].path))
                             for name, role, allowed, _ in seen if not allowed)
    assert sum(a["result"] == "error:forbidden" for a in rows) == len(refused)


async def _mounted_caller(face: Any, token: str) -> Caller:
    """The Caller the mounted MCP face builds for a request with this token."""
    principal, secret = await face._authenticate(httpx.Headers({"authorization":
                                                                f"Bearer {token}"}))

    class _Req:
        scope = {"podplane.principal": principal, "podplane.token": secret}

    class _Ctx:
        request = _Req()

    return await face._caller(_Ctx())  # type: ignore[no-any-return]


def test_kind_table_covers_every_kind_and_matches_the_starts(client: TestClient) -> None:
    kinds = {k for k in engine_of(client.app.state.podplane).workflows.kinds()
             if not k.startswith("test")}
    assert kinds == set(KIND_TABLE) == set(KINDS), "add a row per new operation kind"
    for kind, (role, destroys) in KIND_TABLE.items():
        assert KINDS[kind] == Authority(role, destroys)
        start = REGISTRY[kind]  # each kind is started by the service of the same name
        if kind in PLAN_DECIDES:  # the start needs less unless its plan destroys
            assert (start.role, start.effect) == (PLAN_DECIDES[kind], Effect.MUTATE), kind
        else:
            assert (start.role, start.effect is Effect.DESTROY) == (role, destroys), kind


def _begin(client: TestClient, kind: str) -> str:
    async def go() -> str:
        engine = engine_of(client.app.state.podplane)
        op = await engine.begin(kind, f"authz/{kind}", {}, key=None, face="api",
                                principal="authz-admin")
        return op.id

    assert client.portal is not None
    return client.portal.call(go)


def test_retry_and_cancel_of_every_kind_by_every_role(
    client: TestClient, tokens: dict[Role, str]
) -> None:
    """Retry and cancel need the kind's role; through MCP a destroy also needs confirm."""
    cells = 0
    for kind, (needed, destroys) in KIND_TABLE.items():
        op_id = _begin(client, kind)
        first_step = engine_of(client.app.state.podplane).workflows.get(kind).step_names[0]
        for action, path in (("retry", f"/api/v1/operations/{op_id}/steps/{first_step}/retry"),
                             ("cancel", f"/api/v1/operations/{op_id}/cancel")):
            for role in ROLES:
                r = client.post(path, headers=_as(tokens, role))
                cells += 1
                if role.allows(needed):
                    assert r.status_code not in (401, 403, 428), (kind, action, role, r.text)
                else:
                    assert r.status_code == 403, (kind, action, role, r.text)
                    # A viewer is stopped by the route itself, before the kind is read.
                    assert r.json()["needed_role"] == (needed if role.allows(O) else O).value
                if role.allows(needed):
                    assert _mcp(client, tokens, role, action, op_id, first_step, None) == (
                        "confirmation_required" if destroys else None), (kind, action, role)
                    assert _mcp(client, tokens, role, action, op_id, first_step, True) is None
    assert cells == len(KIND_TABLE) * 2 * 3


def _mcp(client: TestClient, tokens: dict[Role, str], role: Role, action: str, op_id: str,
         step: str, confirm: bool | None) -> str | None:
    """The refusal code an agent gets for retry/cancel (None: not refused by authorization)."""
    from podplane.mcp.http import McpHttp

    face = McpHttp(client.app, client.app.state.podplane)
    name = "operation_retry_step" if action == "retry" else "operation_cancel"
    args: dict[str, Any] = {"operation_id": op_id}
    if action == "retry":
        args["step"] = step
    if confirm is not None:
        args["confirm"] = confirm

    async def go() -> str | None:
        result = await mcp_server.call(name, args, await _mounted_caller(face, tokens[role]))
        code = (result.structured_content or {}).get("error", {}).get("code") \
            if result.is_error else None
        return code if code in ("forbidden", "confirmation_required", "unauthenticated") \
            else None

    assert client.portal is not None
    return client.portal.call(go)


def _cluster(client: TestClient, name: str, count: int) -> None:
    """A managed cluster whose HyperPod side (a fake) has one group of `count` nodes."""
    fakes_hp = client.app.state.podplane.cloud.aws.hyperpod
    fakes_hp.clusters[f"{name}-hp"] = {
        "ClusterName": f"{name}-hp", "ClusterStatus": "InService",
        "InstanceGroups": [{"InstanceGroupName": "workers", "InstanceType": "ml.m5.xlarge",
                            "TargetCount": count, "CurrentCount": count,
                            "TrainingPlanArn": "arn:aws:sagemaker:us-west-2:111122223333:"
                                               "training-plan/p"}]}

    async def row() -> None:
        async with client.app.state.podplane.sessions.begin() as db:
            await cluster_rows.upsert(db, name, region="us-west-2", eks_cluster_name=name,
                                      hyperpod_cluster_name=f"{name}-hp", origin="created",
                                      state="active", spec={}, facts={"vpc_id": "vpc-1"})

    assert client.portal is not None
    client.portal.call(row)


def test_scale_down_is_a_destroy_and_scale_up_is_not(
    client: TestClient, tokens: dict[Role, str]
) -> None:
    _cluster(client, "shrink", 3)
    _cluster(client, "grow", 1)
    group = "/api/v1/clusters/{}/instance-groups/workers"
    down = group.format("shrink")
    for role in (V, O):
        r = client.patch(down, json={"count": 0, "confirm": True}, headers=_as(tokens, role))
        assert r.status_code == 403, (role, r.text)
    unconfirmed = client.patch(down, json={"count": 1}, headers=_as(tokens, A))
    assert unconfirmed.status_code == 428 and "terminates 2 node(s)" in unconfirmed.json()[
        "detail"]
    plan = client.patch(down, json={"count": 1, "dry_run": True}, headers=_as(tokens, A))
    assert plan.status_code == 200 and plan.json()["plan"]["count_to"] == 1
    started = client.patch(down, json={"count": 0}, params={"confirm": "true"},
                           headers=_as(tokens, A))
    assert started.status_code == 202, started.text
    shrink_op = started.json()["id"]

    up = client.patch(group.format("grow"), json={"count": 2}, headers=_as(tokens, O))
    assert up.status_code == 202, up.text
    grow_op = up.json()["id"]
    assert client.patch(group.format("grow"), json={"count": 2},
                        headers=_as(tokens, V)).status_code == 403

    # The operation carries what its start needed: the operator may not cancel the admin's
    # scale-down, but may cancel its own scale-up.
    assert client.post(f"/api/v1/operations/{shrink_op}/cancel",
                       headers=_as(tokens, O)).status_code == 403
    assert client.post(f"/api/v1/operations/{grow_op}/cancel",
                       headers=_as(tokens, O)).status_code == 202
    assert _mcp(client, tokens, A, "cancel", shrink_op, "", None) == "confirmation_required"
    assert _mcp(client, tokens, O, "cancel", grow_op, "", None) is None

    rows = [a for a in _audit(client, tokens) if a["action"] == "instance_group.scale"
            and ("shrink" in a["target"] or "grow" in a["target"])]
    by_result = [(a["principal"], a["result"], (a["detail"] or {}).get("flags"),
                  (a["detail"] or {}).get("authority")) for a in reversed(rows)]
    assert by_result == [
        ("authz-viewer", "error:forbidden", None, None),
        ("authz-operator", "error:forbidden", {"confirm": True, "dry_run": False}, None),
        ("authz-admin", "error:confirmation_required", {"confirm": False, "dry_run": False},
         None),
        ("authz-admin", "ok", {"confirm": False, "dry_run": True}, None),
        ("authz-admin", "ok", {"confirm": True, "dry_run": False},
         {"role": "admin", "destroys": True}),
        ("authz-operator", "ok", {"confirm": False, "dry_run": False},
         {"role": "operator", "destroys": False}),
        ("authz-viewer", "error:forbidden", None, None),
    ]


def test_import_is_admin_and_cluster_delete_needs_confirm(
    client: TestClient, tokens: dict[Role, str]
) -> None:
    for role in (V, O):
        r = client.post("/api/v1/clusters/import", json={"name": "outside"},
                        headers=_as(tokens, role))
        assert r.status_code == 403, role
    _cluster(client, "doomed", 1)
    unconfirmed = client.delete("/api/v1/clusters/doomed", headers=_as(tokens, A))
    assert unconfirmed.status_code == 428
    assert unconfirmed.json()["code"] == "confirmation_required"

    async def state() -> str:
        async with client.app.state.podplane.sessions() as db:
            row = await cluster_rows.get(db, "doomed")
        assert row is not None
        return row.state

    assert client.portal is not None
    assert client.portal.call(state) == "active"  # refused: untouched
    (row,) = [a for a in _audit(client, tokens) if a["target"] == "cluster/doomed"]
    assert (row["result"], row["detail"]["flags"]) == (
        "error:confirmation_required", {"force": False, "confirm": False})
