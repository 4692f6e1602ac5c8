"""Declaring workflows: one registry per engine, the product's kinds and persisted step names,
and a step called alone (no engine, no execution)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from podplane import bootstrap
from podplane.bootstrap import product_workflows
from podplane.domain.errors import CloudError, ConfigError, InvalidInput
from podplane.ops.clock import ManualClock
from podplane.ops.context import StepContext
from podplane.ops.engine import OpsEngine
from podplane.ops.workflows import Workflow, Workflows
from podplane.services.context import AppState
from podplane.services.groups.workflows import ADD, GroupSteps
from podplane.settings import Settings
from tests.conftest import client_for
from tests.ops.conftest import engine_with


async def nothing(ctx: StepContext) -> dict[str, Any]:
    return {}


async def test_two_engines_in_one_process_have_their_own_workflows(state: AppState) -> None:
    mine = engine_with(state, ManualClock(), Workflow.of("only.mine", ("one", nothing)))
    other = OpsEngine.build(state.sessions, ManualClock(),
                            workflows=Workflows([Workflow.of("only.other", ("one", nothing))]))
    assert "only.mine" in mine.workflows and "only.mine" not in other.workflows
    started = await mine.begin("only.mine", "t/a", {}, key=None, face="api", principal="t")
    assert started.kind == "only.mine" and [s.name for s in started.steps] == ["one"]
    with pytest.raises(InvalidInput, match="only.mine"):
        await other.begin("only.mine", "t/b", {}, key=None, face="api", principal="t")
    page, _ = await other.page(status=None, kind=None, target="t/b", limit=5, cursor=None,
                               history=False)
    assert page == []  # the refused start left nothing behind


def test_a_kind_or_a_step_name_declared_twice_is_refused() -> None:
    flows = Workflows([Workflow.of("k", ("a", nothing))])
    with pytest.raises(ValueError, match="declared twice"):
        flows.add(Workflow.of("k", ("b", nothing)))
    with pytest.raises(ValueError, match="unique step names"):
        Workflow.of("j", ("a", nothing), ("a", nothing))
    with pytest.raises(ValueError, match="at least one step"):
        Workflow.of("empty")


def test_product_kinds_keep_their_persisted_step_names(state: AppState) -> None:
    """Step names are stored with each operation: a resumed one finds its code by them."""
    cloud: Any = SimpleNamespace(aws=SimpleNamespace(hyperpod=object()))
    flows = {f.kind: f.step_names for f in product_workflows(state, cloud)}
    assert flows == {
        "cluster.create": ["preflight", "network", "eks", "access", "dependencies", "hyperpod",
                           "node_dependencies", "storage", "verify"],
        "cluster.import": ["connect", "detect", "register"],
        "cluster.delete": ["hyperpod", "eks", "network", "identity", "forget"],
        "instance_group.add": ["place", "update-cluster", "wait-nodes", "kubernetes"],
        "instance_group.scale": ["update-cluster", "wait-nodes", "kubernetes"],
        "instance_group.delete": ["update-cluster", "wait-nodes", "kubernetes"],
        "node.reboot": ["reboot", "kubernetes"],
        "node.replace": ["drain", "replace", "kubernetes"],
        "node.delete": ["drain", "delete", "kubernetes"],
        "cluster.reconcile": ["observe", "repair", "confirm"],
        "job.submit": ["apply", "admitted"],
        "job.cancel": ["suspend", "stopped"],
        "job.delete": ["delete", "gone"],
        "feature.set": ["apply", "verify"],
        "endpoint.create": ["apply", "ready"],
        "endpoint.scale": ["scale", "settled"],
        "endpoint.delete": ["delete", "gone"],
        "model.download": ["secret", "job", "wait", "verify", "cleanup"],
        "endpoint.update": ["apply", "rollout", "smoke", "rollback"],
        "endpoint.autoscale": ["apply"],
        "pool.create": ["apply", "ready"],
        "pool.scale": ["mark", "scale", "settled"],
        "pool.assign": ["service", "label", "drain", "ready"],
        "pool.delete": ["delete", "gone"],
        "diagnose.nccl": ["all_nodes", "pairs", "cleanup", "verdict"],
        "space.create": ["token", "home", "apply", "ready"],
        "space.state": ["apply", "settled"],
        "space.delete": ["delete", "gone"],
    }


async def test_a_step_runs_alone_and_reads_what_earlier_steps_returned() -> None:
    """update-cluster of instance_group.add needs the subnet the place step chose; without it
    the step fails before touching the cloud (the cloud here has no attributes at all)."""
    steps = GroupSteps(cloud=object())  # type: ignore[arg-type]
    params = {"cluster_ref": {"name": "c", "hyperpod": "c", "eks": "c"},
              "group": {"name": "g", "instance_type": "ml.m5.xlarge", "count": 1,
                        "capacity_type": "on-demand"}}
    ctx = StepContext(op_id="op-1", kind=ADD, target="cluster/c", params=params,
                      step="update-cluster", idx=1, attempt=1, clock=ManualClock(),
                      phase_name=None, results={"availability_zone": "us-west-2a"})
    with pytest.raises(CloudError) as missing:
        await steps.add_group(ctx)
    assert missing.value.code == "placement_missing"


async def test_the_product_alone_has_no_test_kit(settings: Settings,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PODPLANE_TEST_WORKFLOWS", raising=False)
    assert bootstrap.load_testkit() is None
    async with client_for(bootstrap.build_app(settings), None) as anon:
        known = await anon.get("/api/v1/operations")  # a route: it asks who we are
        unknown = await anon.post("/api/v1/operations/_test", json={"target": "t"})
    # only GET /operations/{op_id} matches that path: no route accepts the POST
    assert known.status_code == 401 and unknown.status_code == 405
    monkeypatch.setenv("PODPLANE_TEST_WORKFLOWS", "1")
    kit = bootstrap.load_testkit()
    assert kit is not None and [r.path for r in kit.routers[0].routes] == ["/operations/_test"]
    monkeypatch.setattr(bootstrap, "entry_points", lambda group: [])
    with pytest.raises(ConfigError, match="test kit is not installed"):
        bootstrap.load_testkit()
