"""AWS errors as the services return them (code, HTTP status, message)."""

from __future__ import annotations


class AwsError(Exception):
    def __init__(self, code: str, message: str, status: int = 400,
                 fields: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.fields = fields or {}  # members the error shape adds (botocore's model)


# SageMaker (JSON 1.1) codes
def sm_not_found(what: str) -> AwsError:
    return AwsError("ResourceNotFound", what)


def sm_validation(message: str) -> AwsError:
    return AwsError("ValidationException", message)


def sm_conflict(message: str) -> AwsError:
    return AwsError("ConflictException", message)


def sm_in_use(message: str) -> AwsError:
    return AwsError("ResourceInUse", message)


def sm_limit(message: str) -> AwsError:
    return AwsError("ResourceLimitExceeded", message)


# EKS (REST-JSON) codes
def eks_not_found(message: str) -> AwsError:
    return AwsError("ResourceNotFoundException", message, 404)


def eks_in_use(message: str) -> AwsError:
    return AwsError("ResourceInUseException", message, 409)


def eks_invalid_param(message: str) -> AwsError:
    return AwsError("InvalidParameterException", message, 400)


def eks_invalid_request(message: str) -> AwsError:
    return AwsError("InvalidRequestException", message, 400)


def throttled(service: str) -> AwsError:
    status = 429 if service == "eks" else 400
    return AwsError("ThrottlingException", "Rate exceeded", status)


def access_denied(action: str) -> AwsError:
    user = "arn:aws:iam::123456789012:user/moto"
    return AwsError("AccessDeniedException",
                    f"User: {user} is not authorized to perform: {action}", 403)
