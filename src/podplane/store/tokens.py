"""Token and session rows. Only SHA-256 hashes are stored."""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from podplane.store.models import SessionModel, TokenModel

TOKEN_PREFIX = "pp_"


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def new_secret() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


async def create(db: AsyncSession, name: str, role: str) -> tuple[TokenModel, str]:
    secret = new_secret()
    row = TokenModel(
        id=secrets.token_hex(8), name=name, role=role, token_hash=hash_secret(secret),
        created_at=datetime.now(UTC),
    )
    db.add(row)
    await db.flush()
    return row, secret


async def create_first(db: AsyncSession, name: str, role: str) -> str | None:
    """Create the first token unless any token exists; None when another process won the race
    (the unique name makes the loser's insert fail, on SQLite and PostgreSQL alike)."""
    if await db.scalar(select(TokenModel.id).limit(1)) is not None:
        return None
    try:
        async with db.begin_nested():
            _row, secret = await create(db, name, role)
    except IntegrityError:
        return None
    return secret


async def by_secret(db: AsyncSession, secret: str) -> TokenModel | None:
    row = await db.scalar(select(TokenModel).where(TokenModel.token_hash == hash_secret(secret)))
    if row is None or row.revoked_at is not None:
        return None
    return row


async def by_name(db: AsyncSession, name: str) -> TokenModel | None:
    return await db.scalar(select(TokenModel).where(TokenModel.name == name))


async def by_id(db: AsyncSession, token_id: str) -> TokenModel | None:
    return await db.get(TokenModel, token_id)


async def all_tokens(db: AsyncSession) -> list[TokenModel]:
    return list((await db.execute(select(TokenModel).order_by(TokenModel.created_at))).scalars())


async def count_active_admins(db: AsyncSession) -> int:
    q = select(func.count()).where(TokenModel.role == "admin", TokenModel.revoked_at.is_(None))
    return int(await db.scalar(q) or 0)


async def revoke(db: AsyncSession, row: TokenModel) -> None:
    row.revoked_at = datetime.now(UTC)
    await db.execute(delete(SessionModel).where(SessionModel.token_id == row.id))


async def open_session(db: AsyncSession, token_id: str, ttl_seconds: int) -> str:
    sid = secrets.token_urlsafe(32)
    now = datetime.now(UTC)
    db.add(
        SessionModel(
            id_hash=hash_secret(sid), token_id=token_id, created_at=now,
            expires_at=now + timedelta(seconds=ttl_seconds),
        )
    )
    return sid


async def token_for_session(db: AsyncSession, sid: str) -> TokenModel | None:
    row = await db.get(SessionModel, hash_secret(sid))
    if row is None or _aware(row.expires_at) < datetime.now(UTC):
        return None
    token = await db.get(TokenModel, row.token_id)
    return token if token is not None and token.revoked_at is None else None


async def close_session(db: AsyncSession, sid: str) -> None:
    await db.execute(delete(SessionModel).where(SessionModel.id_hash == hash_secret(sid)))


def _aware(at: datetime) -> datetime:
    """SQLite hands back naive datetimes; they were written as UTC."""
    return at if at.tzinfo else at.replace(tzinfo=UTC)
