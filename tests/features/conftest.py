"""A HyperPod cluster in the sandbox registered as imported (tests/groups/conftest), with the
podplane bucket recorded and the training operator add-on, for the feature tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from botocore.exceptions import ClientError

from podplane.services.clusters.state import save_facts
from tests.groups.conftest import Cluster
from tests.groups.conftest import cluster as group_cluster  # noqa: F401 - fixture reuse

BUCKET = "podplane-gpu-bucket"
BASE = "/api/v1/clusters/gpu/features"


@pytest.fixture
async def cluster(group_cluster: Cluster) -> AsyncIterator[Cluster]:  # noqa: F811
    await save_facts(group_cluster.stack.app.state.podplane, group_cluster.name, bucket=BUCKET)
    yield group_cluster


def mutations(ledger: list[dict[str, object]]) -> list[str]:
    return [f"{e['service']}:{e['action']}" for e in ledger]


def addon_of(cluster: Cluster, name: str) -> dict[str, Any] | None:
    """The EKS add-on as DescribeAddon shows it, None when EKS does not find it."""
    try:
        return dict(cluster.stack.aws("eks").describe_addon(
            clusterName=cluster.name, addonName=name)["addon"])
    except ClientError as err:
        assert err.response["Error"]["Code"] == "ResourceNotFoundException"
        return None


async def same_again_changes_nothing(client: httpx.AsyncClient, cluster: Cluster, url: str,
                                     body: dict[str, Any]) -> None:
    """The request that made the feature, sent again: changed=false and no cloud mutation."""
    count = len(cluster.stack.ledger())
    same = await client.patch(url, json=body)
    assert same.status_code == 200 and same.json()["changed"] is False
    assert len(cluster.stack.ledger()) == count
