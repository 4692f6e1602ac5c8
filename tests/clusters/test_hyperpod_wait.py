"""The hyperpod step's wait has a deadline: a cluster that never fills fails the step
(retryably) instead of polling forever; on-start deep health checks earn a longer wait."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any, cast

import pytest

from podplane.domain.errors import CloudError
from podplane.ops.context import StepContext
from podplane.services.clusters.hyperpod import WAIT_SECONDS, check_deadline

START = datetime(2026, 1, 1, tzinfo=UTC)


def _ctx(waited: float) -> StepContext:
    clock = SimpleNamespace(now=lambda: START + timedelta(seconds=waited))
    return cast("StepContext", SimpleNamespace(clock=clock,
                                               checkpoint={"wait_started": START.isoformat()}))


def _cluster(deep: bool) -> dict[str, Any]:
    group = {"InstanceGroupName": "g", "CurrentCount": 1, "TargetCount": 2}
    if deep:
        group["OnStartDeepHealthChecks"] = ["InstanceStress"]
    return {"ClusterName": "c", "ClusterStatus": "InService", "InstanceGroups": [group]}


def test_the_wait_ends_with_a_retryable_timeout() -> None:
    check_deadline(_ctx(WAIT_SECONDS[False] - 1), _cluster(deep=False))
    with pytest.raises(CloudError) as err:
        check_deadline(_ctx(WAIT_SECONDS[False] + 1), _cluster(deep=False))
    assert err.value.code == "hyperpod_timeout" and err.value.retryable
    assert "g 1/2" in str(err.value)


def test_deep_health_checks_get_a_longer_wait() -> None:
    check_deadline(_ctx(WAIT_SECONDS[False] + 1), _cluster(deep=True))
    with pytest.raises(CloudError):
        check_deadline(_ctx(WAIT_SECONDS[True] + 1), _cluster(deep=True))
