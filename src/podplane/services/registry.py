"""The @service decorator: declares an effect, enforces the role, and audits what happened.

Faces read `effect_of(fn)` to derive authorization and MCP annotations, so the hint a
client sees and the check the server makes come from the same declaration.

Audit: a mutation writes one row whatever its result; a read writes one only when it is
refused (401, 403, 409, 422, 428). The row's detail carries the flags that matter (`force`,
`confirm`, `dry_run`) and, for a started operation, the authority retrying or cancelling it
needs (`services.access.authority`). An error the wrapper audited is marked so the face that
renders it does not audit it a second time.

One action, one role check: a face may `admit` a call early (REST does, before it validates a
body, so an under-privileged caller gets 403, never 422); the service it then calls with that
admitted Ctx does not check again. The check itself is only ever made here.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

from podplane.domain.effects import Effect, Role, role_needed
from podplane.domain.errors import ConfirmationRequired, Forbidden, PodplaneError
from podplane.services.context import Ctx
from podplane.store import audit_log

P = ParamSpec("P")
R = TypeVar("R")
FLAGS = ("force", "confirm", "dry_run")
# Refusals of the caller's request, audited even for reads, one row each. A 429 is audited by
# the face that refused it, coalesced (services.access.audit.record_limited): one row per
# refusal of a flood would turn it into a flood of writes.
REFUSALS = frozenset({401, 403, 409, 422, 428})
AUDITED = "podplane_audited"


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


@dataclass
class Grant:
    """The authority the running call needs; a service may raise it (scale-down destroys)."""

    role: Role
    destroys: bool
    escalated_by: list[str] = field(default_factory=list)

    def as_detail(self) -> dict[str, Any]:
        return {"role": self.role.value, "destroys": self.destroys}


REGISTRY: dict[str, ServiceSpec] = {}
_GRANT: ContextVar[Grant | None] = ContextVar("podplane_grant", default=None)


def service(
    effect: Effect, action: str, target: Callable[..., str] | None = None,
    min_role: Role | None = None,
) -> Callable[[Callable[P, Awaitable[R]]], Callable[P, Awaitable[R]]]:
    """Declare a service function's effect. The first argument must be a Ctx."""

    def wrap(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
        spec = ServiceSpec(action=action, effect=effect, target=target, min_role=min_role)
        REGISTRY[action] = spec
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        async def run(*args: P.args, **kwargs: P.kwargs) -> R:
            ctx = args[0]
            assert isinstance(ctx, Ctx)
            if _GRANT.get() is not None:  # called by another service: its row covers this
                check_role(ctx, spec)
                return await fn(*args, **kwargs)
            call = _Call(spec, ctx, _flags(signature, args, kwargs))
            grant = Grant(spec.role, effect is Effect.DESTROY)
            token = _GRANT.set(grant)
            try:
                if not _admitted(ctx, spec):
                    check_role(ctx, spec)
                result = await fn(*args, **kwargs)
            except PodplaneError as err:
                if effect.mutates or err.status in REFUSALS:
                    await call.record(_target(spec, args, kwargs), f"error:{err.code}", None,
                                      grant)
                    setattr(err, AUDITED, True)
                raise
            finally:
                _GRANT.reset(token)
            if effect.mutates:
                await call.record(_target(spec, args, kwargs), "ok", _operation_id(result), grant)
            return result

        run.__podplane_service__ = spec  # type: ignore[attr-defined]
        return run

    return wrap


def effect_of(fn: Callable[..., Any]) -> ServiceSpec:
    spec = getattr(fn, "__podplane_service__", None)
    if spec is None:
        raise TypeError(f"{fn!r} is not a declared service function")
    return spec  # type: ignore[no-any-return]


def check_role(ctx: Ctx, spec: ServiceSpec) -> None:
    require(ctx, spec.role, spec.action)


@dataclass(frozen=True)
class Admitted(Ctx):
    """A Ctx whose role was checked for `action` (by `admit`): that service skips its check."""

    action: str = ""


def admit(ctx: Ctx, spec: ServiceSpec) -> Ctx:
    """The action's one role check, made as early as the face can ask for it."""
    check_role(ctx, spec)
    return Admitted(principal=ctx.principal, app=ctx.app, action=spec.action)


def _admitted(ctx: Ctx, spec: ServiceSpec) -> bool:
    return isinstance(ctx, Admitted) and ctx.action == spec.action


def require(ctx: Ctx, needed: Role, action: str) -> None:
    if not ctx.principal.role.allows(needed):
        raise Forbidden(
            f"'{action}' needs the {needed.value} role; "
            f"'{ctx.principal.name}' is {ctx.principal.role.value}.",
            hint="Ask an admin for a token with a higher role.", needed_role=needed.value,
        )


def escalate_to_destroy(ctx: Ctx, action: str, what: str, *, confirm: bool,
                        dry_run: bool = False) -> None:
    """This call turned out to destroy (e.g. a scale-down terminates instances): it needs the
    admin role and, unless it only plans, confirm=true. The operation it starts remembers it."""
    escalate_to_admin(ctx, action, what, confirm=confirm, dry_run=dry_run, destroys=True)


def escalate_to_admin(ctx: Ctx, action: str, what: str, *, confirm: bool,
                      dry_run: bool = False, destroys: bool = False) -> None:
    """This call turned out to need an admin who agreed (a destroy, or opening something to
    the internet): the admin role and, unless it only plans, confirm=true."""
    require(ctx, Role.ADMIN, action)
    grant = _GRANT.get()
    if grant is not None:
        grant.role, grant.destroys = Role.ADMIN, grant.destroys or destroys
        grant.escalated_by.append(action)
    if not confirm and not dry_run:
        raise ConfirmationRequired(f"{what}.", hint="Send confirm=true once the user agreed "
                                   "(dry_run=true shows the plan).")


@dataclass(frozen=True)
class _Call:
    spec: ServiceSpec
    ctx: Ctx
    flags: dict[str, bool]

    async def record(self, target: str, result: str, op_id: str | None, grant: Grant) -> None:
        detail: dict[str, Any] = {}
        if self.flags:
            detail["flags"] = self.flags
        if op_id is not None:
            detail["authority"] = grant.as_detail()
        async with self.ctx.app.sessions.begin() as db:
            await audit_log.append(
                db, principal=self.ctx.principal, action=self.spec.action, target=target,
                result=result, operation_id=op_id, detail=detail or None,
            )


def _flags(signature: inspect.Signature, args: Any, kwargs: Any) -> dict[str, bool]:
    """The flags the call was made with (named in `FLAGS`), for the audit row."""
    if not any(name in signature.parameters for name in FLAGS):
        return {}
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return {}
    bound.apply_defaults()
    return {name: bool(bound.arguments[name]) for name in FLAGS if name in bound.arguments}


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
    if op_id is None:  # CreateResult carries its operation
        op_id = getattr(getattr(result, "operation", None), "id", None)
    return op_id if isinstance(op_id, str) else None
