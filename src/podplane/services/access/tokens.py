"""Tokens for people, scripts and agents. Admin only."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from podplane.domain.effects import Effect, Role
from podplane.domain.errors import Conflict, InvalidInput, NotFound
from podplane.domain.names import TOKEN_NAME_PATTERN
from podplane.services.access.auth import forget_token
from podplane.services.context import Ctx
from podplane.services.registry import service
from podplane.store import tokens as token_rows
from podplane.store.models import TokenModel

NAME_RULE = re.compile(TOKEN_NAME_PATTERN)
# The engine and local maintenance act as "system" in the audit log; no token may pose as it.
RESERVED = frozenset({"system"})


@dataclass(frozen=True)
class TokenInfo:
    id: str
    name: str
    role: str
    created_at: datetime
    last_used_at: datetime | None
    revoked: bool


@dataclass(frozen=True)
class NewToken:
    info: TokenInfo
    secret: str


def _info(row: TokenModel) -> TokenInfo:
    return TokenInfo(
        row.id, row.name, row.role, row.created_at, row.last_used_at, row.revoked_at is not None
    )


def check_name(name: str) -> None:
    # fullmatch: `$` would let a trailing newline through into audit rows and log lines.
    if name in RESERVED:
        raise InvalidInput(f"Token name {name!r} is reserved.",
                           hint="Pick another name; 'system' is how podplane itself is audited.")
    if not NAME_RULE.fullmatch(name):
        raise InvalidInput(
            f"Token name {name!r} is not valid.",
            hint="Use 1-63 characters: lowercase letters, digits, '.', '_', '-'.",
        )


@service(Effect.CREATE, "token.create", target=lambda name, role: f"token/{name}",
         min_role=Role.ADMIN)
async def create_token(ctx: Ctx, name: str, role: Role) -> NewToken:
    return await mint(ctx, name, role)


async def mint(ctx: Ctx, name: str, role: Role) -> NewToken:
    """Create a token without an auth check: used by the CLI on the local database."""
    check_name(name)
    async with ctx.app.sessions.begin() as db:
        if await token_rows.by_name(db, name):
            raise Conflict(f"A token named {name!r} already exists.",
                           hint="Pick another name or revoke the old token first.")
        row, secret = await token_rows.create(db, name, role.value)
        return NewToken(_info(row), secret)


@service(Effect.READ, "token.list", min_role=Role.ADMIN)
async def list_tokens(ctx: Ctx) -> list[TokenInfo]:
    async with ctx.app.sessions() as db:
        return [_info(r) for r in await token_rows.all_tokens(db)]


@service(Effect.DESTROY, "token.revoke", target=lambda name: f"token/{name}")
async def revoke_token(ctx: Ctx, name: str) -> TokenInfo:
    return await revoke(ctx, name)


async def revoke(ctx: Ctx, name: str) -> TokenInfo:
    async with ctx.app.sessions.begin() as db:
        row = await token_rows.by_name(db, name)
        if row is None:
            raise NotFound(f"No token named {name!r}.")
        if row.revoked_at is None and row.role == "admin":
            if await token_rows.count_active_admins(db) <= 1:
                raise Conflict("This is the last admin token; revoking it would lock everyone out.",
                               hint="Create another admin token first.")
        await token_rows.revoke(db, row)
        info = _info(row)
    # After the commit: cached look-ups go and open streams of this token close now.
    forget_token(ctx.app, info.id)
    return info
