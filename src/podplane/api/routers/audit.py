"""The audit log: who did what, through which face, with what result."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Annotated

from fastapi import APIRouter, Depends, Query

from podplane.api.auth import ctx_for
from podplane.services.access import audit as svc
from podplane.services.context import Ctx

router = APIRouter(tags=["audit"])


@dataclass(frozen=True)
class AuditOut(svc.AuditEntry):
    """An audit line (the service's AuditEntry, under the name the API gives it)."""


@router.get("/audit", response_model=list[AuditOut])
async def list_audit(
    ctx: Annotated[Ctx, Depends(ctx_for(svc.list_audit))],
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    before_id: Annotated[int | None, Query(ge=1, le=2**62)] = None,
    principal: Annotated[str | None, Query(max_length=64)] = None,
    action: Annotated[str | None, Query(max_length=64)] = None,
) -> list[AuditOut]:
    rows = await svc.list_audit(ctx, limit, before_id, principal, action)
    return [AuditOut(**asdict(r)) for r in rows]
