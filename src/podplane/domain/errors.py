"""Errors with a stable code, an HTTP status and a human hint. Faces render them as problems."""

from __future__ import annotations

from typing import Any


class PodplaneError(Exception):
    code = "internal_error"
    status = 500
    title = "Internal error"

    def __init__(self, message: str, *, hint: str | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.extra = extra


class NotFound(PodplaneError):
    code, status, title = "not_found", 404, "Not found"


class InvalidInput(PodplaneError):
    code, status, title = "invalid_input", 422, "Invalid input"


class Conflict(PodplaneError):
    code, status, title = "conflict", 409, "Conflict"


class GroupExists(Conflict):
    code = "group_exists"


class IdempotencyMismatch(Conflict):
    code, title = "idempotency_key_reused", "Idempotency key reused with a different request"


class TargetBusy(Conflict):
    code, title = "target_busy", "Another operation is running on this target"


class Unauthenticated(PodplaneError):
    code, status, title = "unauthenticated", 401, "Authentication required"


class Forbidden(PodplaneError):
    code, status, title = "forbidden", 403, "Forbidden"


class ConfirmationRequired(PodplaneError):
    code, status, title = "confirmation_required", 428, "Confirmation required"


class CloudError(PodplaneError):
    """An error the cloud returned, classified. `retryable` tells the engine whether to back off."""

    code, status, title = "cloud_error", 502, "Cloud error"

    def __init__(
        self, message: str, *, code: str | None = None, retryable: bool = False,
        hint: str | None = None, **extra: Any,
    ) -> None:
        super().__init__(message, hint=hint, **extra)
        if code:
            self.code = code
        self.retryable = retryable


class ConfigError(PodplaneError):
    """The process cannot start with this configuration (region, endpoints, backend)."""

    code, status, title = "config_invalid", 500, "Invalid configuration"
