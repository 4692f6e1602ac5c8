"""botocore exceptions -> the neutral `AwsError` record; `domain.cloud_errors` classifies it."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import (
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)

from podplane.domain.cloud_errors import AwsError, classify_error, unexpected, unreachable
from podplane.domain.errors import CloudError


def to_cloud_error(err: Exception, operation: str) -> CloudError:
    """`operation` is "service.operation" (boto3 snake_case)."""
    if isinstance(err, (EndpointConnectionError, ConnectTimeoutError, ReadTimeoutError)):
        endpoint = str(getattr(err, "kwargs", {}).get("endpoint_url", ""))
        return unreachable(operation, str(err), endpoint)
    if not isinstance(err, ClientError):
        return unexpected(operation, str(err))
    return classify_error(record_of(err, operation))


def record_of(err: ClientError, operation: str) -> AwsError:
    info: dict[str, Any] = err.response.get("Error", {})
    meta: dict[str, Any] = err.response.get("ResponseMetadata", {})
    code = str(info.get("Code", "Unknown"))
    service, _, op = operation.rpartition(".")
    return AwsError(service, op, code, str(info.get("Message", "")) or code,
                    int(meta.get("HTTPStatusCode") or 0))
