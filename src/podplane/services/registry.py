"""The @service decorator: declares an effect, enforces the role, and audits mutations.

Faces read `effect_of(fn)` to derive authorization and MCP annotations, so the hint a
client sees and the check the server makes come from the same declaration.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

from podplane.domain.effects import Effect, Role, role_needed
from podplane.domain.errors import Forbidden, PodplaneError
from podplane.services.context import Ctx
from podplane.store import audit_log

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class ServiceSpec:
    action: str
    effect: Effect
    target: Callable[..., str] | None
    min_role: Role | None = None

    @property
    def role(self) -> Role:
        needed = role_needed(self.effect)
        return self.min_role if self.min_role and self.min_role.allows(needed) else needed


REGISTRY: dict[str, ServiceSpec] = {}


def service(
    effect: Effect, action: str, target: Callable[..., str] | None = None,
    min_role: Role | None = None,
) -> Callable[[Callable[P, Awaitable[R]]], Callable[P, Awaitable[R]]]:
    """Declare a service function's effect. The first argument must be a Ctx."""

    def wrap(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
        spec = ServiceSpec(action=action, effect=effect, target=target, min_role=min_role)
        REGISTRY[action] = spec

        @functools.wraps(fn)
        async def run(*args: P.args, **kwargs: P.kwargs) -> R:
            ctx = args[0]
            assert isinstance(ctx, Ctx)
            check_role(ctx, spec)
            if not effect.mutates:
                return await fn(*args, **kwargs)
            return await _audited(spec, fn, args, kwargs)

        run.__podplane_service__ = spec  # type: ignore[attr-defined]
        return run

    return wrap


def effect_of(fn: Callable[..., Any]) -> ServiceSpec:
    spec = getattr(fn, "__podplane_service__", None)
    if spec is None:
        raise TypeError(f"{fn!r} is not a declared service function")
    return spec  # type: ignore[no-any-return]


def check_role(ctx: Ctx, spec: ServiceSpec) -> None:
    needed = spec.role
    if not ctx.principal.role.allows(needed):
        raise Forbidden(
            f"'{spec.action}' needs the {needed.value} role; "
            f"'{ctx.principal.name}' is {ctx.principal.role.value}.",
            hint="Ask an admin for a token with a higher role.",
        )


async def _audited(
    spec: ServiceSpec, fn: Callable[..., Awaitable[R]], args: Any, kwargs: Any
) -> R:
    ctx: Ctx = args[0]
    target = _target(spec, args, kwargs)
    try:
        result = await fn(*args, **kwargs)
    except PodplaneError as err:
        await _record(ctx, spec.action, target, f"error:{err.code}", None)
        raise
    await _record(ctx, spec.action, target, "ok", _operation_id(result))
    return result


async def _record(ctx: Ctx, action: str, target: str, result: str, op_id: str | None) -> None:
    async with ctx.app.sessions.begin() as db:
        await audit_log.append(
            db, principal=ctx.principal, action=action, target=target,
            result=result, operation_id=op_id,
        )


def _target(spec: ServiceSpec, args: Any, kwargs: Any) -> str:
    if spec.target is None:
        return "-"
    try:
        return str(spec.target(*args[1:], **kwargs))
    except Exception:  # a bad target function must not hide the real call
        return "?"


def _operation_id(result: Any) -> str | None:
    op_id = getattr(result, "id", None)
    if isinstance(result, dict):
        op_id = result.get("id") if result.get("kind") else None
    return op_id if isinstance(op_id, str) else None
