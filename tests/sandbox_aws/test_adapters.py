"""The real boto3 adapters against the sandbox: error mapping, hints, throttling backoff."""

from __future__ import annotations

import boto3
import pytest

from podplane.cloud.aws import AwsCaller, EksAdapter, HyperPodAdapter, QuotasAdapter
from podplane.domain.cloud_errors import classify
from podplane.domain.errors import CloudError
from tests.sandbox_aws.conftest import ROLE, Box, group, network


def caller(box: Box, **kw: object) -> tuple[AwsCaller, list[float], list[tuple[str, int]]]:
    sleeps: list[float] = []
    seen: list[tuple[str, int]] = []

    async def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    aws = AwsCaller("us-west-2", endpoint_url=box.url, sleep=fake_sleep, botocore_attempts=1,
                    observer=lambda op, attempt, err: seen.append((op, attempt)),
                    session=sandbox_session(), **kw)  # type: ignore[arg-type]
    return aws, sleeps, seen


def sandbox_session() -> boto3.session.Session:
    return boto3.session.Session(aws_access_key_id="test", aws_secret_access_key="test",
                                 region_name="us-west-2")


async def test_throttling_is_retried_with_backoff_and_observed(box: Box) -> None:
    aws, sleeps, seen = caller(box)
    box.control("POST", "/faults", json={"kind": "throttling", "service": "eks",
                                         "action": "ListClusters", "remaining": 2})
    assert await EksAdapter(aws).list_clusters() == []
    assert seen == [("eks.list_clusters", 1), ("eks.list_clusters", 2)]
    assert len(sleeps) == 2 and sleeps[1] >= sleeps[0] / 2 > 0


async def test_throttling_gives_up_after_max_attempts(box: Box) -> None:
    aws, sleeps, _ = caller(box, max_attempts=3)
    box.control("POST", "/faults", json={"kind": "throttling", "service": "sagemaker"})
    with pytest.raises(CloudError) as err:
        await HyperPodAdapter(aws).list_clusters()
    assert err.value.code == "throttled" and err.value.retryable
    assert err.value.extra["attempts"] == 3 and len(sleeps) == 2


async def test_quota_error_maps_with_a_hint_naming_the_quota(box: Box) -> None:
    aws, _, _ = caller(box)
    box.control("PUT", "/quotas", json={"instance_type": "ml.p5.48xlarge", "value": 1})
    subnet, sg = network(box)
    spec = {"ClusterName": "hp1", "InstanceGroups": [group("gpu", "ml.p5.48xlarge", 2)],
            "VpcConfig": {"Subnets": [subnet], "SecurityGroupIds": [sg]}}
    with pytest.raises(CloudError) as err:
        await HyperPodAdapter(aws).create_cluster(spec)
    assert err.value.code == "quota_exceeded" and not err.value.retryable
    assert err.value.hint and "'ml.p5.48xlarge for cluster usage' is 1" in err.value.hint
    assert await QuotasAdapter(aws).sagemaker_cluster_quota("ml.p5.48xlarge") == 1.0


async def test_cluster_quota_falls_back_to_the_aws_default(box: Box) -> None:
    """No applied value (never increased): ListServiceQuotas omits the quota, so the adapter
    reads AWS's default (0 for GPU types in a fresh account)."""
    aws, _, _ = caller(box)
    quotas = QuotasAdapter(aws)
    default = await quotas.cluster_quota("ml.p4d.24xlarge")
    assert default is not None and (default["value"], default["source"]) == (0.0, "default")
    assert await quotas.sagemaker_cluster_quota("ml.p4d.24xlarge") == 0.0
    box.control("PUT", "/quotas", json={"instance_type": "ml.p4d.24xlarge", "value": 4})
    applied = await quotas.cluster_quota("ml.p4d.24xlarge")
    assert applied is not None and (applied["value"], applied["source"]) == (4.0, "applied")
    assert await quotas.cluster_quota("ml.nothing.large") is None


async def test_not_found_is_none_on_inspect_and_an_error_on_mutation(box: Box) -> None:
    aws, _, _ = caller(box)
    eks = EksAdapter(aws)
    assert await eks.describe_cluster("missing") is None
    with pytest.raises(CloudError) as err:
        await eks.delete_cluster("missing")
    assert err.value.code == "cloud_not_found" and err.value.status == 404
    created = await eks.create_cluster("eks1", ROLE, ["subnet-1"], ["sg-1"], client_token="t1")
    assert created["status"] == "CREATING"
    with pytest.raises(CloudError) as dup:
        await eks.create_cluster("eks1", ROLE, ["subnet-1"], ["sg-1"])
    assert dup.value.code == "cloud_conflict" and dup.value.status == 409


async def test_unreachable_endpoint_is_retryable() -> None:
    async def no_sleep(_: float) -> None:
        return None

    aws = AwsCaller("us-west-2", endpoint_url="http://127.0.0.1:9", sleep=no_sleep,
                    max_attempts=2, botocore_attempts=1, session=sandbox_session())
    with pytest.raises(CloudError) as err:
        await EksAdapter(aws).list_clusters()
    assert err.value.code == "cloud_unreachable" and err.value.retryable
    assert "podplane sandbox" in (err.value.hint or "")  # a loopback endpoint: the sandbox


def test_unreachable_aws_hint_does_not_mention_the_sandbox() -> None:
    from botocore.exceptions import EndpointConnectionError

    from podplane.cloud.aws.errors import to_cloud_error

    err = to_cloud_error(EndpointConnectionError(
        endpoint_url="https://eks.us-west-2.amazonaws.com/clusters"), "eks.list_clusters")
    assert err.code == "cloud_unreachable" and "sandbox" not in (err.hint or "")


@pytest.mark.parametrize(("code", "message", "ours", "retryable"), [
    ("ThrottlingException", "Rate exceeded", "throttled", True),
    ("InsufficientInstanceCapacity", "We currently do not have sufficient p5.48xlarge capacity "
     "in the Availability Zone you requested (us-west-2a). You can currently get p5.48xlarge "
     "capacity by choosing us-west-2b, us-west-2c.", "insufficient_capacity", True),
    ("AccessDeniedException", "not authorized", "access_denied", False),
    ("ValidationException", "bad", "cloud_invalid", False),
    ("ResourceInUseException", "exists", "cloud_conflict", False),
    ("ServiceUnavailableException", "down", "cloud_unavailable", True),
    ("SomethingNew", "?", "cloud_error", False),
])
def test_classify(code: str, message: str, ours: str, retryable: bool) -> None:
    err = classify(code, message, "op")
    assert (err.code, err.retryable) == (ours, retryable)
    if ours == "insufficient_capacity":
        assert err.extra["available_azs"] == ["us-west-2b", "us-west-2c"]


async def test_build_aws_uses_aws_endpoint_url_and_satisfies_the_ports(
        box: Box, monkeypatch: pytest.MonkeyPatch) -> None:
    from podplane.cloud.aws import build_aws
    from podplane.cloud.ports_aws import EksPort, HyperPodPort, QuotasPort

    for key, value in (("AWS_ENDPOINT_URL", box.url), ("AWS_ACCESS_KEY_ID", "test"),
                       ("AWS_SECRET_ACCESS_KEY", "test")):
        monkeypatch.setenv(key, value)
    aws = build_aws("us-west-2")
    ports: tuple[EksPort, HyperPodPort, QuotasPort] = (aws.eks, aws.hyperpod, aws.quotas)
    assert await ports[0].list_clusters() == []
    assert await ports[1].list_clusters() == []
    zones = await aws.ec2.availability_zones()
    assert [z["ZoneName"] for z in zones][:2] == ["us-west-2a", "us-west-2b"]
    offers = await aws.ec2.instance_type_offerings(["ml.p5.48xlarge"])
    assert {o["InstanceType"] for o in offers} == {"p5.48xlarge"}
