"""AWS errors -> CloudError with our stable code, `retryable`, and a hint a human can act on."""

from __future__ import annotations

import re
from typing import Any

from botocore.exceptions import (
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)

from podplane.domain.errors import CloudError

NOT_FOUND = {"ResourceNotFound", "ResourceNotFoundException", "NotFoundException",
             "NoSuchEntity", "NoSuchBucket", "NoSuchResourceException"}
CONFLICT = {"ResourceInUse", "ResourceInUseException", "ConflictException",
            "EntityAlreadyExists", "BucketAlreadyOwnedByYou"}
INVALID = {"ValidationException", "InvalidParameterException", "InvalidRequestException",
           "InvalidParameterValue", "InvalidParameterCombination", "ValidationError"}
QUOTA = {"ResourceLimitExceeded", "ResourceLimitExceededException", "LimitExceeded",
         "LimitExceededException", "ServiceQuotaExceededException",
         "VcpuLimitExceeded", "InstanceLimitExceeded"}
CAPACITY = {"InsufficientInstanceCapacity", "InsufficientCapacity",
            "InsufficientCapacityException", "InsufficientCapacityError"}
THROTTLE = {"ThrottlingException", "Throttling", "TooManyRequestsException",
            "RequestLimitExceeded", "SlowDown", "ProvisionedThroughputExceededException"}
DENIED = {"AccessDenied", "AccessDeniedException", "UnauthorizedOperation",
          "UnrecognizedClientException", "InvalidClientTokenId", "ExpiredToken"}
UNAVAILABLE = {"ServiceUnavailable", "ServiceUnavailableException", "InternalFailure",
               "InternalError", "ServerException", "InternalServerError"}

_STATUS = {"cloud_not_found": 404, "cloud_conflict": 409, "cloud_invalid": 422}


def to_cloud_error(err: Exception, operation: str) -> CloudError:
    if isinstance(err, (EndpointConnectionError, ConnectTimeoutError, ReadTimeoutError)):
        return _error("cloud_unreachable", f"{operation}: cannot reach AWS ({err})", True,
                      unreachable_hint(str(getattr(err, "kwargs", {}).get("endpoint_url", ""))))
    if not isinstance(err, ClientError):
        return _error("cloud_error", f"{operation}: {err}", False, None)
    info: dict[str, Any] = err.response.get("Error", {})
    code = str(info.get("Code", "Unknown"))
    message = str(info.get("Message", "")) or code
    return classify(code, message, operation)


def classify(code: str, message: str, operation: str) -> CloudError:
    text = f"{operation}: {code}: {message}"
    if code in THROTTLE:
        return _error("throttled", text, True, "AWS is rate-limiting this account; the "
                      "operation backs off and retries.")
    if code in CAPACITY or "InsufficientCapacity" in message:
        return capacity_error(text, message)
    if code in QUOTA:
        return _error("quota_exceeded", text, False, quota_hint(message))
    if code in DENIED:
        return _error("access_denied", text, False, "The control plane's IAM identity lacks a "
                      "permission for this call; see the message for the action.")
    if code in NOT_FOUND:
        return _error("cloud_not_found", text, False, None)
    if code in CONFLICT:
        return _error("cloud_conflict", text, False, "The resource exists or is busy; read its "
                      "state and retry when it settles.")
    if code in INVALID:
        return _error("cloud_invalid", text, False, None)
    if code in UNAVAILABLE:
        return _error("cloud_unavailable", text, True, "AWS had an internal error; retrying.")
    return _error("cloud_error", text, False, None)


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
