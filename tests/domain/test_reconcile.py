"""The reconcile core: diff, dependants, plan order, no-op and ownership."""

from __future__ import annotations

import pytest

from podplane.domain.reconcile import (
    Desired,
    FieldDiff,
    Observed,
    dependants,
    diff,
    ordered,
    plan,
)

# A small graph like a cluster's: the operator needs cert-manager, which needs coredns.
COREDNS = Desired("coredns", "eks-addon", {"version": "v1.11"})
CERTS = Desired("cert-manager", "eks-addon", {"version": "v1.15"}, after=("coredns",))
OPERATOR = Desired("operator", "eks-addon", {"version": "v1.0"}, after=("cert-manager",))
ROLE = Desired("operator-role", "iam-role-policy", {"policy": "arn:p"}, after=())
UNITS = (OPERATOR, ROLE, CERTS, COREDNS)


def seen(unit: Desired, owned: bool = True, healthy: bool = True,
         **fields: str) -> Observed:
    return Observed(unit.key, unit.kind, {**unit.fields, **fields}, owned=owned, healthy=healthy)


def all_present() -> dict[str, Observed]:
    return {u.key: seen(u) for u in UNITS}


def test_order_puts_what_is_needed_first_and_keeps_peers_in_place() -> None:
    assert [u.key for u in ordered(UNITS)] == [
        "coredns", "cert-manager", "operator", "operator-role"]


def test_a_cycle_is_an_error_naming_the_path() -> None:
    a = Desired("a", "x", after=("b",))
    b = Desired("b", "x", after=("a",))
    with pytest.raises(ValueError, match="a -> b -> a"):
        ordered((a, b))


def test_dependants_are_transitive_and_in_dependency_order() -> None:
    deps = dependants(UNITS)
    assert deps["coredns"] == ("cert-manager", "operator")
    assert deps["cert-manager"] == ("operator",)
    assert deps["operator"] == ()
    assert deps["operator-role"] == ()


def test_nothing_differs_means_no_change() -> None:
    result = plan(UNITS, all_present())
    assert result.changed is False
    assert result.steps == () and result.left_alone == ()
    assert diff(UNITS, all_present()) == []


def test_a_missing_unit_is_created_and_names_its_dependants() -> None:
    observed = all_present()
    del observed["cert-manager"]
    [drift] = diff(UNITS, observed)
    assert (drift.key, drift.state, drift.dependants) == ("cert-manager", "missing",
                                                          ("operator",))
    result = plan(UNITS, observed)
    assert result.changed is True
    assert [(s.key, s.verb, s.cause) for s in result.steps] == [
        ("cert-manager", "create", "missing")]


def test_a_changed_field_is_named_and_updated() -> None:
    observed = all_present()
    observed["operator-role"] = seen(ROLE, policy="arn:other")
    [drift] = diff(UNITS, observed)
    assert drift.fields == (FieldDiff("policy", "arn:p", "arn:other"),)
    assert "policy is 'arn:other', want 'arn:p'" in drift.summary()
    [step] = plan(UNITS, observed).steps
    assert (step.verb, step.cause, step.fields) == ("update", "changed", drift.fields)


def test_fields_left_unset_are_not_compared() -> None:
    loose = Desired("coredns", "eks-addon", {"version": None})
    assert plan((loose,), {"coredns": seen(COREDNS, version="v0.1")}).changed is False


def test_an_unhealthy_unit_is_updated_after_what_it_needs() -> None:
    observed = all_present()
    observed["operator"] = seen(OPERATOR, healthy=False)
    del observed["coredns"]
    steps = plan(UNITS, observed).steps
    assert [(s.key, s.verb, s.cause) for s in steps] == [
        ("coredns", "create", "missing"), ("operator", "update", "unhealthy")]


def test_an_unowned_unit_that_differs_is_left_alone_unless_adopted() -> None:
    observed = all_present()
    observed["coredns"] = seen(COREDNS, owned=False, version="v0.9")
    result = plan(UNITS, observed)
    assert result.steps == ()
    assert [a.key for a in result.left_alone] == ["coredns"]
    assert "not created by podplane" in result.left_alone[0].reason
    adopted = Desired("coredns", "eks-addon", {"version": "v1.11"}, adopt=True)
    assert [s.key for s in plan((adopted,), observed).steps] == ["coredns"]


def test_prune_deletes_only_what_podplane_owns_dependants_first() -> None:
    node_class = Observed("nodeclass/a", "HyperpodNodeClass", owned=True)
    pool = Observed("nodepool/a", "NodePool", owned=True, after=("nodeclass/a",))
    theirs = Observed("nodepool/theirs", "NodePool", owned=False)
    observed = {o.key: o for o in (node_class, theirs, pool)}
    result = plan((), observed, prune=True)
    assert [(s.key, s.verb) for s in result.steps] == [
        ("nodepool/a", "delete"), ("nodeclass/a", "delete")]
    assert [(a.key, a.kind) for a in result.left_alone] == [("nodepool/theirs", "NodePool")]


def test_without_prune_undesired_units_are_ignored() -> None:
    extra = Observed("nodepool/a", "NodePool", owned=True)
    assert plan(UNITS, {**all_present(), "nodepool/a": extra}).changed is False


def test_deletes_come_before_creates() -> None:
    stale = Observed("old", "manifest", owned=True)
    observed = {"old": stale}
    steps = plan((COREDNS,), observed, prune=True).steps
    assert [(s.key, s.verb) for s in steps] == [("old", "delete"), ("coredns", "create")]
