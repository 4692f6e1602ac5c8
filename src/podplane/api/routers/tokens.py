"""Tokens: admin only."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Path
from pydantic import BaseModel, Field

from podplane.api.auth import ctx_for
from podplane.domain.effects import Role
from podplane.services.access import tokens as svc
from podplane.services.context import Ctx

router = APIRouter(tags=["tokens"])
TokenName = Annotated[str, Path(min_length=1, max_length=63)]


class TokenOut(BaseModel):
    id: str
    name: str
    role: str
    created_at: datetime
    last_used_at: datetime | None
    revoked: bool


class TokenCreate(BaseModel):
    name: str = Field(min_length=1, max_length=63)
    role: Role


class TokenCreated(TokenOut):
    token: str = Field(description="The secret. Shown once; store it now.")


@router.get("/tokens", response_model=list[TokenOut])
async def list_tokens(ctx: Annotated[Ctx, Depends(ctx_for(svc.list_tokens))]) -> list[TokenOut]:
    return [TokenOut.model_validate(t, from_attributes=True) for t in await svc.list_tokens(ctx)]


@router.post("/tokens", response_model=TokenCreated, status_code=201)
async def create_token(
    body: TokenCreate, ctx: Annotated[Ctx, Depends(ctx_for(svc.create_token))]
) -> TokenCreated:
    new = await svc.create_token(ctx, body.name, body.role)
    out = TokenOut.model_validate(new.info, from_attributes=True)
    return TokenCreated(**out.model_dump(), token=new.secret)


@router.delete("/tokens/{name}", response_model=TokenOut)
async def revoke_token(
    name: TokenName, ctx: Annotated[Ctx, Depends(ctx_for(svc.revoke_token))]
) -> TokenOut:
    return TokenOut.model_validate(await svc.revoke_token(ctx, name), from_attributes=True)
