"""The error rules in the domain, over the neutral record, and the adapter's one job: turn a
botocore error into that record."""

from __future__ import annotations

from botocore.exceptions import ClientError

from podplane.cloud.aws.errors import record_of, to_cloud_error
from podplane.domain.cloud_errors import AwsError, classify_error
from podplane.domain.hyperpod_failures import group_event_failure


def test_auth_failure_means_a_held_address_only_for_release_address() -> None:
    held = classify_error(AwsError("ec2", "release_address", "AuthFailure", "in use"))
    other = classify_error(AwsError("ec2", "describe_vpcs", "AuthFailure", "bad key"))
    assert (held.code, held.retryable) == ("cloud_dependency", True)
    assert other.code != "cloud_dependency" and not other.retryable


def test_not_found_and_conflict_carry_their_http_status() -> None:
    gone = classify_error(AwsError("iam", "get_role", "NoSuchEntity", "no role"))
    taken = classify_error(AwsError("s3", "create_bucket", "BucketAlreadyOwnedByYou", "mine"))
    assert (gone.code, gone.status) == ("cloud_not_found", 404)
    assert (taken.code, taken.status) == ("cloud_conflict", 409)
    assert gone.message == "iam.get_role: NoSuchEntity: no role"


def test_an_error_event_is_classified_by_its_description() -> None:
    capacity = group_event_failure({"EventLevel": "Error", "InstanceGroupName": "g",
                                    "Description": "InsufficientCapacity in us-west-2a"})
    other = group_event_failure({"EventLevel": "Error", "Description": "script failed"})
    assert capacity is not None and capacity.code == "insufficient_capacity"
    assert other is not None and (other.code, other.retryable) == ("instance_group_failed", True)
    assert group_event_failure({"EventLevel": "Info", "Description": "x"}) is None


def test_the_adapter_turns_a_client_error_into_the_record() -> None:
    raw = ClientError({"Error": {"Code": "DependencyViolation", "Message": "has ENIs"},
                       "ResponseMetadata": {"HTTPStatusCode": 400}}, "DeleteSubnet")
    assert record_of(raw, "ec2.delete_subnet") == AwsError(
        "ec2", "delete_subnet", "DependencyViolation", "has ENIs", 400)
    err = to_cloud_error(raw, "ec2.delete_subnet")
    assert (err.code, err.retryable) == ("cloud_dependency", True)
