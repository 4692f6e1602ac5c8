"""What an AWS error means for podplane: pure rules over a neutral error record.

An adapter turns whatever its SDK raised into an `AwsError` (service, operation, AWS error code,
message, HTTP status) and asks `classify_error` for the `CloudError` users see: our stable code,
whether the engine retries it, and a hint a human can act on. Nothing here does I/O.

Sources of the error codes (one line per family below):
- "Common Errors" of the AWS API references (EKS, SageMaker, IAM, STS, Service Quotas) and the
  EC2 API Reference "Error codes for the Amazon EC2 API";
- the S3 API Reference "Error responses" (NoSuchBucket, BucketAlreadyOwnedByYou, SlowDown);
- the IAM API Reference per action (NoSuchEntity, EntityAlreadyExists, LimitExceeded).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from podplane.domain.errors import CloudError


@dataclass(frozen=True)
class AwsError:
    """An AWS error as every SDK reports it (status 0: no HTTP answer was read)."""

    service: str
    operation: str
    code: str
    message: str
    status: int = 0

    @property
    def where(self) -> str:
        return f"{self.service}.{self.operation}" if self.service else self.operation


# ResourceNotFound(Exception): SageMaker/EKS; NotFoundException: EKS; NoSuchEntity: IAM;
# NoSuchBucket, NoSuchTagSet (a bucket without tags): S3; NoSuchResourceException: Service
# Quotas; *NatGateway*: EC2 error codes; FileSystemNotFound: FSx.
NOT_FOUND = {"ResourceNotFound", "ResourceNotFoundException", "NotFoundException",
             "NoSuchEntity", "NoSuchBucket", "NoSuchTagSet",
             "NoSuchResourceException",
             "NatGatewayNotFound", "InvalidNatGatewayID.NotFound", "FileSystemNotFound"}
# ResourceInUse: SageMaker; ResourceInUseException/ConflictException: EKS;
# EntityAlreadyExists: IAM; BucketAlreadyOwnedByYou: S3.
CONFLICT = {"ResourceInUse", "ResourceInUseException", "ConflictException",
            "EntityAlreadyExists", "BucketAlreadyOwnedByYou"}
# ValidationException: the common errors; InvalidParameter*: EKS and EC2; ValidationError: STS;
# BadRequest, InvalidNetworkSettings: FSx.
INVALID = {"ValidationException", "InvalidParameterException", "InvalidRequestException",
           "InvalidParameterValue", "InvalidParameterCombination", "ValidationError",
           "BadRequest", "InvalidNetworkSettings"}
# ResourceLimitExceeded: SageMaker; LimitExceeded: IAM; ServiceQuotaExceededException: EKS;
# VcpuLimitExceeded / InstanceLimitExceeded: EC2 error codes.
QUOTA = {"ResourceLimitExceeded", "ResourceLimitExceededException", "LimitExceeded",
         "LimitExceededException", "ServiceQuotaExceededException",
         "VcpuLimitExceeded", "InstanceLimitExceeded"}
# InsufficientInstanceCapacity: EC2 error codes; the others: SageMaker/HyperPod messages.
CAPACITY = {"InsufficientInstanceCapacity", "InsufficientCapacity",
            "InsufficientCapacityException", "InsufficientCapacityError"}
# ThrottlingException/Throttling: common errors; RequestLimitExceeded: EC2; SlowDown: S3.
THROTTLE = {"ThrottlingException", "Throttling", "TooManyRequestsException",
            "RequestLimitExceeded", "SlowDown", "ProvisionedThroughputExceededException"}
# AccessDenied*, UnrecognizedClientException, InvalidClientTokenId, ExpiredToken: common
# errors; UnauthorizedOperation: EC2 error codes.
DENIED = {"AccessDenied", "AccessDeniedException", "UnauthorizedOperation",
          "UnrecognizedClientException", "InvalidClientTokenId", "ExpiredToken"}
# ServiceUnavailable, InternalFailure: common errors; ServerException: EKS.
UNAVAILABLE = {"ServiceUnavailable", "ServiceUnavailableException", "InternalFailure",
               "InternalError", "ServerException", "InternalServerError"}

# EC2 refuses these while something that depends on the resource is still going away
# (a NAT gateway deleting, lingering ENIs, a VPC endpoint); they clear on their own
DEPENDENCY = {"DependencyViolation"}
# ReleaseAddress answers AuthFailure while a NAT gateway still holds the address (kops#1604,
# grafiti#89); anywhere else AuthFailure is a credentials problem
HELD_ADDRESS = ("AuthFailure", "ec2.release_address")

_STATUS = {"cloud_not_found": 404, "cloud_conflict": 409, "cloud_invalid": 422}
ROLE_NOT_READY = "iam_role_not_ready"
# How services refuse a role they cannot assume -- also what they answer while a new role or a
# changed trust policy propagates through IAM: EKS CreateCluster "Role with arn: ..., could not
# be assumed because it does not exist or the trusted entity is not correct"; EKS Pod Identity
# "Role provided in the request does not exist" (hashicorp/terraform-provider-aws#34717);
# SageMaker "Could not assume role ... Please ensure that the role exists and allows principal
# 'sagemaker.amazonaws.com' to assume the role".
_ROLE_REFUSED = re.compile(r"could not be assumed|could not assume role|unable to assume|"
                           r"role provided in the request does not exist", re.IGNORECASE)
# The engine backs these off and retries (capacity needs a decision, so it is not here).
RETRIED_CODES = frozenset({"throttled", "cloud_unavailable", "cloud_unreachable"})


def classify(code: str, message: str, operation: str) -> CloudError:
    """`operation` as "service.operation" (or any label)."""
    service, _, op = operation.rpartition(".")
    return classify_error(AwsError(service, op, code, message))


def classify_error(error: AwsError) -> CloudError:
    code, operation, message = error.code, error.where, error.message
    text = f"{operation}: {code}: {message}"
    if code in THROTTLE:
        return _error("throttled", text, True, "AWS is rate-limiting this account; the "
                      "operation backs off and retries.")
    if code in CAPACITY or "InsufficientCapacity" in message:
        return capacity_error(text, message)
    if code in QUOTA:
        return _error("quota_exceeded", text, False, quota_hint(message))
    if code in DEPENDENCY or (code, operation) == HELD_ADDRESS:
        return _error("cloud_dependency", text, True, "Something still uses this resource "
                      "(a NAT gateway, network interfaces or an endpoint being removed); it "
                      "clears by itself, so the call is retried.")
    if code in DENIED:
        return _error("access_denied", text, False, "The control plane's IAM identity lacks a "
                      "permission for this call; see the message for the action.")
    if code in NOT_FOUND:
        return _error("cloud_not_found", text, False, None)
    if code in CONFLICT:
        return _error("cloud_conflict", text, False, "The resource exists or is busy; read its "
                      "state and retry when it settles.")
    if role_not_ready(code, message):
        return _error(ROLE_NOT_READY, text, False, "IAM changes take a minute to reach other "
                      "services; if the role exists, check that its trust policy names the "
                      "service.")
    if code in INVALID:
        return _error("cloud_invalid", text, False, None)
    if code in UNAVAILABLE:
        return _error("cloud_unavailable", text, True, "AWS had an internal error; retrying.")
    return _error("cloud_error", text, False, None)


def unreachable(operation: str, detail: str, endpoint: str) -> CloudError:
    """No answer at all (connection refused, timeouts): retried, with where to look."""
    return _error("cloud_unreachable", f"{operation}: cannot reach AWS ({detail})", True,
                  unreachable_hint(endpoint))


def unexpected(operation: str, detail: str) -> CloudError:
    """Anything the SDK raised that is neither an AWS answer nor a transport failure."""
    return _error("cloud_error", f"{operation}: {detail}", False, None)


def role_not_ready(code: str, message: str) -> bool:
    """A refusal to assume a role: retried for a while, as IAM is eventually consistent."""
    return code in INVALID and _ROLE_REFUSED.search(message) is not None


def unreachable_hint(endpoint: str) -> str:
    """Name the sandbox only when the endpoint is one (a loopback address)."""
    if re.search(r"//(127\.|localhost|\[::1\])", endpoint):
        return ("Nothing answers at the local endpoint; start it with `podplane sandbox` "
                "(or unset AWS_ENDPOINT_URL to use AWS).")
    return ("Check network access to AWS from this host (proxy, firewall, VPC endpoints) "
            "and the region.")


def capacity_error(text: str, message: str) -> CloudError:
    """HyperPod's capacity message names no Availability Zone; EC2's names where capacity
    is ("... by choosing us-west-2b, us-west-2c."), and only then does the hint."""
    azs = capacity_azs(message)
    hint = (f"EC2 reports capacity in: {', '.join(azs)}. Choose one of these Availability "
            "Zones, another instance type, or a training plan."
            if azs else "AWS has no capacity for this instance type right now. Retry later, "
            "try another Availability Zone or instance type, or reserve a training plan.")
    return _error("insufficient_capacity", text, True, hint, available_azs=azs)


def capacity_azs(message: str) -> list[str]:
    m = re.search(r"by choosing (.*)$", message)
    if not m:
        return []
    return re.findall(r"\b[a-z]{2}-[a-z]+-\d[a-z]\b", m.group(1))


def quota_hint(message: str) -> str:
    m = re.search(r"service limit '([^']+)' is (\d+)", message)
    if m:
        return (f"Quota '{m.group(1)}' is {m.group(2)}. Request an increase in Service Quotas "
                "(service: Amazon SageMaker) or lower the instance count.")
    return "An account quota is exhausted; request an increase in Service Quotas."


def _error(code: str, message: str, retryable: bool, hint: str | None,
           **extra: Any) -> CloudError:
    err = CloudError(message, code=code, retryable=retryable, hint=hint, **extra)
    if code in _STATUS:
        err.status = _STATUS[code]
    return err

