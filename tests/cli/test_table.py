"""The CLI's REST commands are rows (cli/table.py): each row names a real route, sends only
that route's own query parameters and body fields, and builds the request it always sent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from podplane.bootstrap import build_app
from podplane.cli import clusters, diagnose, groups, operations, spaces
from podplane.cli.table import Command
from podplane.domain.instance_groups import CapacityType
from podplane.settings import Settings

ROWS = [*clusters.COMMANDS, *groups.GROUP_COMMANDS, *groups.NODE_COMMANDS,
        *operations.COMMANDS, *diagnose.COMMANDS, *spaces.COMMANDS,
        *spaces.TEMPLATE_COMMANDS]


@pytest.fixture(scope="module")
def openapi(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    home = tmp_path_factory.mktemp("openapi")
    return build_app(Settings(home=home, database_url=f"sqlite:///{home}/db")).openapi()


def _shape(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "{}", path)


def _route(doc: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    found = [ops[method.lower()] for p, ops in doc["paths"].items()
             if _shape(p) == _shape(f"/api/v1/{path}") and method.lower() in ops]
    assert len(found) == 1, (method, path)
    return dict(found[0])


def _body_fields(doc: dict[str, Any], op: dict[str, Any]) -> set[str]:
    schema = op["requestBody"]["content"]["application/json"]["schema"]
    name = schema["$ref"].rsplit("/", 1)[-1]
    return set(doc["components"]["schemas"][name]["properties"])


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r.method} {r.path}")
def test_each_row_sends_only_its_routes_own_inputs(row: Command, openapi: dict[str, Any]) -> None:
    for path in filter(None, (row.path, row.dry_run_path)):
        op = _route(openapi, row.method, path)
        query = {p["name"] for p in op.get("parameters", []) if p["in"] == "query"}
        sent = {a.key or a.name for a in row.args if a.to == "query"}
        assert sent <= query, (row.name, sent - query)
        body = {a.key or a.name for a in row.args if a.to == "body"}
        if body:
            assert body <= _body_fields(openapi, op), (row.name, body - _body_fields(openapi, op))
        assert set(re.findall(r"\{([^}]+)\}", path)) <= {a.name for a in row.args}


def _row(rows: tuple[Command, ...], name: str) -> Command:
    return next(r for r in rows if r.name == name)


def test_rows_build_the_requests_the_commands_always_sent() -> None:
    add = _row(groups.GROUP_COMMANDS, "add").request(
        {"cluster": "gpu", "name": "spot", "instance_type": "ml.g5.8xlarge", "count": 2,
         "az": None, "capacity": CapacityType.SPOT, "plan_arn": None, "efa_only": False,
         "ebs_gb": 500, "subnet": "subnet-1", "new_subnet": False, "dry_run": True,
         "wait": True})
    assert add == ("POST", "/api/v1/clusters/gpu/instance-groups", {"json": {
        "name": "spot", "instance_type": "ml.g5.8xlarge", "count": 2, "capacity_type": "spot",
        "efa_only": False, "ebs_gb": 500, "subnet_id": "subnet-1", "new_subnet": False,
        "dry_run": True}})
    delete = _row(clusters.COMMANDS, "delete").request({"name": "a/b", "yes": True,
                                                        "force": True})
    # The person agreed (--yes or the prompt): the destroy carries confirm=true.
    assert delete == ("DELETE", "/api/v1/clusters/a%2Fb",
                      {"params": {"confirm": "true", "force": "true"}})
    scale = _row(groups.GROUP_COMMANDS, "scale").request(
        {"cluster": "gpu", "group": "w", "count": 0, "yes": True, "dry_run": False,
         "wait": True})
    assert scale == ("PATCH", "/api/v1/clusters/gpu/instance-groups/w",
                     {"json": {"count": 0, "confirm": True, "dry_run": False}})
    values = {"name": "c1", "availability_zone": "us-west-2a", "instance_type": "ml.p5.48xlarge",
              "count": 1, "capacity_type": "on-demand", "training_plan_arn": None,
              "region": "us-west-2", "no_deep_health_checks": True, "accept": None,
              "dry_run": True, "wait": True}
    method, path, kw = _row(clusters.COMMANDS, "create").request(values)
    assert (method, path) == ("POST", "/api/v1/cluster-plans")
    assert kw["json"]["deep_health_checks"] is False and kw["json"]["override_warnings"] == []
    assert _row(clusters.COMMANDS, "create").request({**values, "dry_run": False})[1] == (
        "/api/v1/clusters")
    nodes = _row(groups.NODE_COMMANDS, "list").request({"cluster": "gpu", "group": "workers"})
    assert nodes == ("GET", "/api/v1/clusters/gpu/nodes",
                     {"params": {"instance_group": "workers"}})


def test_a_template_row_sends_only_what_was_given() -> None:
    put = _row(spaces.TEMPLATE_COMMANDS, "set").request(
        {"cluster": "gpu", "name": "lab", "images": ["r/lab:1"], "cpu": None,
         "max_cpu": "2", "memory": None, "max_memory": None, "max_gpus": 1,
         "storage_gib": None, "max_storage_gib": None, "idle_minutes": 0, "dry_run": False})
    assert put == ("PUT", "/api/v1/clusters/gpu/space-templates/lab", {"json": {
        "images": ["r/lab:1"], "max_cpu": "2", "max_gpus": 1, "idle_minutes": 0,
        "dry_run": False}})
