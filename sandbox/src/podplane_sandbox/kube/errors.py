"""metav1.Status errors, raised anywhere in the emulator and rendered by the app."""

from __future__ import annotations

from typing import Any

REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    500: "InternalError",
}


class KubeError(Exception):
    def __init__(
        self,
        code: int,
        message: str,
        reason: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason or REASONS.get(code, "Unknown")
        self.details = details

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details:
            body["details"] = self.details
        return body


def not_found(rt_key: str, name: str, group: str, plural: str) -> KubeError:
    res = f"{plural}.{group}" if group else plural
    return KubeError(
        404, f'{res} "{name}" not found', "NotFound", {"name": name, "group": group, "kind": plural}
    )


def already_exists(group: str, plural: str, name: str) -> KubeError:
    res = f"{plural}.{group}" if group else plural
    return KubeError(
        409,
        f'{res} "{name}" already exists',
        "AlreadyExists",
        {"name": name, "group": group, "kind": plural},
    )


def conflict(group: str, plural: str, name: str) -> KubeError:
    res = f"{plural}.{group}" if group else plural
    return KubeError(
        409,
        f'Operation cannot be fulfilled on {res} "{name}": the object has been '
        "modified; please apply your changes to the latest version and try again",
        "Conflict",
        {"name": name, "group": group, "kind": plural},
    )


def invalid(kind: str, group: str, name: str, causes: list[dict[str, str]]) -> KubeError:
    qualified = f"{kind}.{group}" if group else kind
    summary = ", ".join(f"{c['field']}: {c['message']}" for c in causes)
    return KubeError(
        422,
        f'{qualified} "{name}" is invalid: {summary}',
        "Invalid",
        {"name": name, "group": group, "kind": kind, "causes": causes},
    )
