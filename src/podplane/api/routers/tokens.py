"""Tokens: admin only."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Annotated

from fastapi import APIRouter, Depends, Path
from pydantic import BaseModel, Field

from podplane.api.auth import ctx_for
from podplane.domain.effects import Role
from podplane.services.access import tokens as svc
from podplane.services.context import Ctx

router = APIRouter(tags=["tokens"])
TokenName = Annotated[str, Path(min_length=1, max_length=63)]


@dataclass(frozen=True)
class TokenOut(svc.TokenInfo):
    """A token (the service's TokenInfo, under the name the API gives it); never its secret."""


class TokenCreate(BaseModel):
    name: str = Field(min_length=1, max_length=63)
    role: Role


@dataclass(frozen=True)
class TokenCreated(TokenOut):
    token: Annotated[str, Field(description="The secret. Shown once; store it now.")]


def out(info: svc.TokenInfo) -> TokenOut:
    return TokenOut(**asdict(info))


@router.get("/tokens", response_model=list[TokenOut])
async def list_tokens(ctx: Annotated[Ctx, Depends(ctx_for(svc.list_tokens))]) -> list[TokenOut]:
    return [out(t) for t in await svc.list_tokens(ctx)]


@router.post("/tokens", response_model=TokenCreated, status_code=201)
async def create_token(
    body: TokenCreate, ctx: Annotated[Ctx, Depends(ctx_for(svc.create_token))]
) -> TokenCreated:
    new = await svc.create_token(ctx, body.name, body.role)
    return TokenCreated(**asdict(new.info), token=new.secret)


@router.delete("/tokens/{name}", response_model=TokenOut)
async def revoke_token(
    name: TokenName, ctx: Annotated[Ctx, Depends(ctx_for(svc.revoke_token))]
) -> TokenOut:
    return out(await svc.revoke_token(ctx, name))
