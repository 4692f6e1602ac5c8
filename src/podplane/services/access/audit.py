"""Reading the audit log (writing happens in the @service wrapper)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from podplane.domain.effects import Effect
from podplane.domain.principal import ANONYMOUS, Principal
from podplane.services.access.limits import limits_of
from podplane.services.access.strangers import strangers_of
from podplane.services.context import AppState, Ctx
from podplane.services.registry import service
from podplane.store import audit_log


@dataclass(frozen=True)
class AuditEntry:
    id: int
    at: datetime
    principal: str
    role: str
    face: str
    action: str
    target: str
    result: str
    operation_id: str | None
    detail: dict[str, Any] | None


@service(Effect.READ, "audit.list")
async def list_audit(
    ctx: Ctx, limit: int = 100, before_id: int | None = None,
    principal: str | None = None, action: str | None = None,
) -> list[AuditEntry]:
    async with ctx.app.sessions() as db:
        rows = await audit_log.page(
            db, limit=limit, before_id=before_id, principal=principal, action=action
        )
        return [
            AuditEntry(r.id, r.at, r.principal, r.role, r.face, r.action, r.target, r.result,
                       r.operation_id, r.detail)
            for r in rows
        ]


async def record_refusal(
    app: AppState, principal: Principal, action: str, target: str, code: str,
    flags: dict[str, bool] | None = None, address: str | None = None,
) -> None:
    """A refusal a face made before any service ran (401, 403, 422, 428, 429...): one row.
    A caller nobody recognised is coalesced per client address, action and second, as 429s
    are (strangers.py): a flood of bogus tokens writes one row a second, not one each."""
    detail: dict[str, Any] = {"flags": flags} if flags else {}
    if principal.token_id == ANONYMOUS.token_id:
        coalesced = strangers_of(app).refusals.note(f"address:{address or '?'}", action,
                                                    limits_of(app).clock())
        if coalesced is None:
            return
        detail.update({"coalesced": coalesced} if coalesced else {})
    async with app.sessions.begin() as db:
        await audit_log.append(db, principal=principal, action=action[:64], target=target,
                               result=f"error:{code}", detail=detail or None)


async def record_limited(
    app: AppState, principal: Principal, action: str, target: str, code: str = "rate_limited",
) -> bool:
    """A 429 (rate or a cap on open waiters/streams), coalesced so a flood cannot flood the
    table (services.access.limits.RefusalWindows). True when a row was written."""
    limits = limits_of(app)
    coalesced = limits.refusals.note(principal.token_id, action, limits.clock())
    if coalesced is None:
        return False
    async with app.sessions.begin() as db:
        await audit_log.append(db, principal=principal, action=action[:64], target=target,
                               result=f"error:{code}",
                               detail={"coalesced": coalesced} if coalesced else None)
    return True
