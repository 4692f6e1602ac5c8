"""Dependency units: order and the reconcile plan."""

from __future__ import annotations

import pytest

from podplane.domain.dependencies import (
    CORE_UNITS,
    Observed,
    Unit,
    ordered,
    plan_units,
    units_for,
)

DEFAULTS = {u.name: "v1.0-eksbuild.1" for u in CORE_UNITS if u.version is None}


def test_order_respects_after() -> None:
    names = [u.name for u in ordered(CORE_UNITS)]
    for unit in CORE_UNITS:
        for dep in unit.after:
            assert names.index(dep) < names.index(unit.name)


def test_cycle_is_reported() -> None:
    with pytest.raises(ValueError, match="cycle"):
        a, b = Unit("a", "manifest", "1", after=("b",)), Unit("b", "manifest", "1", after=("a",))
        ordered((a, b))


def test_everything_missing_installs_all_in_order() -> None:
    actions = plan_units(CORE_UNITS, {}, DEFAULTS)
    assert [a.verb for a in actions] == ["install"] * len(CORE_UNITS)
    assert [a.unit for a in actions] == ordered(CORE_UNITS)


def test_matching_state_plans_nothing() -> None:
    observed = {u.name: Observed(u.version or DEFAULTS[u.name], True) for u in CORE_UNITS}
    assert plan_units(CORE_UNITS, observed, DEFAULTS) == []


def test_only_the_difference_is_planned() -> None:
    observed = {u.name: Observed(u.version or DEFAULTS[u.name], True) for u in CORE_UNITS}
    observed["coredns"] = Observed("v0.9", True)
    observed["nvidia-device-plugin"] = Observed("0.16.1", False)
    actions = plan_units(CORE_UNITS, observed, DEFAULTS)
    assert [(a.unit.name, a.verb) for a in actions] == [
        ("nvidia-device-plugin", "repair"), ("coredns", "upgrade")]


def test_only_what_runs_without_nodes_comes_before_hyperpod() -> None:
    before = {u.name for u in units_for("cluster") if u.kind == "eks-addon"}
    assert before == {"vpc-cni", "kube-proxy", "eks-pod-identity-agent"}
    after = [u.name for u in ordered(units_for("nodes"))]
    assert after.index("cert-manager") < after.index(
        "amazon-sagemaker-hyperpod-training-operator")
    assert set(after) == {"coredns", "cert-manager", "aws-mountpoint-s3-csi-driver",
                          "amazon-sagemaker-hyperpod-training-operator",
                          # the chart's Kubeflow operators: Deployments, so after nodes too
                          "kubeflow-training-operator", "mpi-operator"}


def test_controllers_that_call_aws_get_their_pod_identity_at_create() -> None:
    by_name = {u.name: u for u in CORE_UNITS}
    csi = by_name["aws-mountpoint-s3-csi-driver"].identity
    operator = by_name["amazon-sagemaker-hyperpod-training-operator"].identity
    assert csi is not None and (csi.namespace, csi.service_account) == (
        "kube-system", "s3-csi-driver-sa")
    assert operator is not None and (operator.namespace, operator.service_account) == (
        "aws-hyperpod", "hp-training-operator-controller-manager")
    assert operator.managed_policies == (
        "arn:aws:iam::aws:policy/AmazonSageMakerHyperPodTrainingOperatorAccess",)
