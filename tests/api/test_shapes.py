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
