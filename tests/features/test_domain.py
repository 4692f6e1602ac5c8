"""The feature catalogue's rules and the resource plan, pure (no cloud)."""

from __future__ import annotations

import pytest

from podplane.domain.errors import Conflict, InvalidInput, NotFound
from podplane.domain.features import autoscaled_groups
from podplane.domain.features import catalog as cat
from podplane.domain.features.model import Resource, Seen, flatten, plan


def test_dependencies_are_refused_both_ways() -> None:
    with pytest.raises(Conflict, match="needs training-operator"):
        cat.check_switch("tiered-checkpointing", True, set())
    cat.check_switch("tiered-checkpointing", True, {"training-operator"})
    # the one feature others need is always on: switching it off is refused first
    with pytest.raises(Conflict, match="stays on"):
        cat.check_switch("training-operator", False, {"training-operator",
                                                      "tiered-checkpointing"})
    with pytest.raises(NotFound):
        cat.feature("karpenter")
    assert cat.dependants("training-operator") == ["tiered-checkpointing"]


def test_a_feature_whose_driver_another_uses_stays_on_while_that_one_is() -> None:
    # the inference operator's init container checks for the FSx CSI driver (chart
    # config/manager/manager.yaml) that fsx-lustre installs
    with pytest.raises(Conflict, match="inference-operator use"):
        cat.check_switch("fsx-lustre", False, {"fsx-lustre", "inference-operator"})
    cat.check_switch("fsx-lustre", False, {"fsx-lustre"})


def test_settings_are_checked_and_defaults_filled() -> None:
    tiered = cat.feature("tiered-checkpointing")
    assert cat.check_settings(tiered, {}) == {"memory_percent": 20, "namespace": "default"}
    assert cat.check_settings(tiered, {"memory_percent": 100})["memory_percent"] == 100
    for bad in ({"memory_percent": 0}, {"memory_percent": 101}, {"memory_percent": True},
                {"memory_percent": "30"}, {"namespace": "Bad_NS"}, {"bucket": "x"}):
        with pytest.raises(InvalidInput):
            cat.check_settings(tiered, bad)
    scaling = cat.feature("managed-autoscaling")
    assert cat.check_settings(scaling, {"groups": ["b", "a"]}) == {"groups": ["a", "b"]}
    with pytest.raises(InvalidInput):
        cat.check_settings(scaling, {"groups": ["a", "a"]})


def test_flatten_compares_lists_by_index_and_keeps_empties() -> None:
    assert flatten({"a": {"b": [1, {"c": "x"}]}, "e": [], "f": {}}) == {
        "a.b.0": 1, "a.b.1.c": "x", "e": "[]", "f": "{}"}


def _res(key: str, present: bool = True, **desired: object) -> Resource:
    return Resource("f", "kube", key, dict(desired), present)


def test_plan_creates_in_order_deletes_in_reverse_and_leaves_foreign_objects() -> None:
    up = [_res("a", x=1), _res("b", x=2), _res("c", x=3)]
    found = plan(up, {})
    assert [(s.verb, s.key) for s, _ in found.steps] == [("create", "a"), ("create", "b"),
                                                          ("create", "c")]
    same = {r.key: Seen({"x": r.desired["x"], "extra": "defaulted"}, True) for r in up}
    assert plan(up, same).empty
    drifted = {**same, "b": Seen({"x": 9}, True)}
    assert plan(up, drifted).drift() == ["b: x: want 2, found 9"]

    down = [_res("a", False, x=1), _res("b", False, x=2), _res("c", False, x=3)]
    seen = {"a": Seen({"x": 1}, True), "b": Seen({"x": 2}, False), "c": Seen({"x": 3}, True)}
    gone = plan(down, seen)
    assert [(s.verb, s.key) for s, _ in gone.steps] == [("delete", "c"), ("delete", "a")]
    assert gone.left_alone == ["b: not created by podplane; not deleted"]
    assert plan(down, {}).empty


def test_autoscaling_refuses_groups_karpenter_on_hyperpod_cannot_scale() -> None:
    """SageMaker docs, "Create a NodeClass": on-demand groups only, none with deep health
    checks (domain/features/autoscaled_groups.py)."""
    assert autoscaled_groups.refusal("gpu", {"InstanceType": "ml.g5.8xlarge"}) is None
    checked = autoscaled_groups.refusal("gpu", {"OnStartDeepHealthChecks": ["InstanceStress"]})
    assert checked is not None and "deep health checks (InstanceStress)" in checked.message
    for other in ({"TrainingPlanArn": "arn:aws:sagemaker:us-west-2:1:training-plan/p"},
                  {"CapacityRequirements": {"Spot": {}}}):
        refused = autoscaled_groups.refusal("gpu", other)
        assert refused is not None and "not on-demand" in refused.message
