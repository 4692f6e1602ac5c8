"""Each field is declared once: the REST bodies, the stored spec and the domain agree by
construction, and these tests hold the one place where two declarations still meet."""

from __future__ import annotations

from dataclasses import fields

from podplane.api.routers.clusters import ClusterIn
from podplane.api.routers.instance_groups import NewGroupIn
from podplane.domain.clusters import ClusterSpec
from podplane.domain.group_requests import NewGroupRequest
from podplane.domain.instance_groups import CapacityType, NewGroup
from podplane.services.clusters.state import spec_dict, spec_from


def names(shape: type) -> list[str]:
    return [f.name for f in fields(shape)]  # type: ignore[arg-type]


def test_the_new_group_request_is_the_domain_group_plus_dry_run() -> None:
    assert names(NewGroupRequest) == [*names(NewGroup), "dry_run"]
    assert names(NewGroupIn) == names(NewGroupRequest)


def test_the_create_body_is_the_spec_plus_accepted_warnings() -> None:
    assert names(ClusterIn) == [*names(ClusterSpec), "override_warnings"]


def test_the_stored_spec_is_the_json_it_always_was() -> None:
    spec = ClusterSpec(name="train-1", availability_zone="us-west-2b",
                       instance_type="ml.p5.48xlarge", count=2,
                       capacity_type=CapacityType.SPOT)
    stored = spec_dict(spec)
    assert stored == {"name": "train-1", "region": "us-west-2",
                      "availability_zone": "us-west-2b", "instance_type": "ml.p5.48xlarge",
                      "count": 2, "capacity_type": "spot", "training_plan_arn": None,
                      "deep_health_checks": True}
    assert spec_from(stored) == spec
    # Specs stored before capacity type and deep health checks existed still read.
    old = {k: v for k, v in stored.items() if k not in ("capacity_type", "deep_health_checks")}
    assert spec_from(old) == ClusterSpec(name="train-1", availability_zone="us-west-2b",
                                         instance_type="ml.p5.48xlarge", count=2)


def test_operation_models_are_the_engine_views_fields() -> None:
    """OperationOut and its parts are derived from ops/views.py: same fields, same order; the
    API only refines types (a Literal status, typed errors) and keeps every field required
    that the console reads as required."""
    from dataclasses import asdict
    from datetime import UTC, datetime

    from podplane.api.routers import operations as api
    from podplane.ops import views

    pairs = [(api.OperationOut, views.Operation), (api.StepOut, views.Step),
             (api.StepEventOut, views.StepEvent), (api.RequestedByOut, views.RequestedBy)]
    for model, view in pairs:
        assert list(model.model_fields) == names(view), model.__name__
    schema = api.OperationOut.model_json_schema()
    assert schema["title"] == "OperationOut"
    assert schema["required"] == names(views.Operation)
    assert set(schema["properties"]["status"]["enum"]) == {
        "pending", "running", "succeeded", "failed", "cancelled"}
    now = datetime(2026, 1, 1, tzinfo=UTC)
    step = views.Step("touch", "failed", "done", 1, now, now, None,
                      {"code": "internal_error", "message": "boom"}, None)
    op = views.Operation("op-1", "test.touch", "thing/x", "failed", [step],
                         views.RequestedBy("api", "me"), None, now, now, 3, False, None,
                         {"code": "x", "message": "y", "step": "touch"}, "/api/v1/operations/op-1")
    shown = api.out(op).model_dump()
    assert list(shown) == list(asdict(op))
    # the API's refinement still applies: an unexpected error never shows its text
    assert shown["steps"][0]["error"]["message"].startswith("The step failed on an unexpected")


def test_node_models_are_the_node_views_keys() -> None:
    """NodeOut and its parts derive from the TypedDicts services/nodes/views.py builds (the
    1,000-node table is serialised from those dicts, so a key added there and not here, or
    the reverse, would be a field the console never sees or one it reads as missing)."""
    from typing import get_type_hints

    from podplane.api.routers import nodes as api
    from podplane.services.nodes import views

    pairs = [(api.NodeOut, views.NodeView), (api.NodeDetailOut, views.NodeDetailView),
             (api.HealthOut, views.HealthView), (api.GpuOut, views.GpuView),
             (api.EscalationStep, views.EscalationStepView)]
    for model, view in pairs:
        assert list(model.model_fields) == list(get_type_hints(view)), model.__name__
    summary = {"InstanceId": "i-0123456789abcdef0", "InstanceStatus": {"Status": "Failure"},
               "InstanceGroupName": "workers", "InstanceType": "ml.g5.8xlarge"}
    built = views.node_view(summary, None, [], None)
    assert api.NodeOut.model_validate(built).model_dump() == built
    assert set(built["health"]) == set(get_type_hints(views.HealthView))
    assert built["health"]["escalation"][1] == {**built["health"]["escalation"][1],
                                                "action": "reboot", "suggested": True}


def test_cluster_status_and_inspect_models_are_their_services_fields() -> None:
    from typing import get_type_hints

    from podplane.api.routers import cluster_shapes as api
    from podplane.services.clusters import inspect
    from podplane.services.clusters import status as st

    pairs = [(api.ClusterStatusOut, st.ClusterStatus), (api.EksStatusOut, st.EksStatus),
             (api.HyperPodStatusOut, st.HyperPodStatus), (api.DriftOut, st.Drift),
             (api.DriftedUnitOut, st.DriftedUnit), (api.DependencyOut, st.DependencyStatus),
             (api.OperationSummaryOut, st.OperationSummary),
             (api.ZoneOut, inspect.Zone), (api.InstanceTypeOut, inspect.InstanceType),
             (api.QuotaOut, inspect.Quota), (api.TrainingPlanOut, inspect.TrainingPlan)]
    for model, source in pairs:
        assert list(model.model_fields) == list(get_type_hints(source)), model.__name__
    # a refinement keeps its description; a dataclass default stays the model's default
    assert "Per GPU" in str(api.InstanceTypeOut.model_fields["gpu_memory_gib"].description)
    assert api.ClusterStatusOut.model_fields["drift"].default is None


def test_a_derived_model_refuses_a_refinement_of_a_field_its_source_lacks() -> None:
    import pytest

    from podplane.api.derived import fields_of
    from podplane.ops import views

    with pytest.raises(TypeError, match="no field"):
        fields_of(views.RequestedBy, who=str)


def test_every_openapi_type_has_its_own_name(app) -> None:  # type: ignore[no-untyped-def]
    """Two models of one name make FastAPI fall back to module-path names
    (`podplane__api__routers__x__Name`), which the console's generated types then lose."""
    names = list(app.openapi()["components"]["schemas"])
    assert [n for n in names if "__" in n] == []
