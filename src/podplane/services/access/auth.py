"""Authentication: bearer tokens and console sessions. Not role-gated: this is the gate."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from podplane.domain.effects import Role
from podplane.domain.errors import Unauthenticated
from podplane.domain.principal import ANONYMOUS, Face, Principal
from podplane.services.context import AppState
from podplane.store import audit_log
from podplane.store import tokens as token_rows
from podplane.store.models import TokenModel

_LAST_USED_GRANULARITY = timedelta(minutes=1)


async def principal_for_token(app: AppState, secret: str, face: Face) -> Principal:
    async with app.sessions.begin() as db:
        row = await token_rows.by_secret(db, secret)
        if row is None:
            raise Unauthenticated("The token is unknown or revoked.")
        _touch(row)
        return _principal(row, face)


async def principal_for_session(app: AppState, sid: str) -> Principal:
    async with app.sessions() as db:
        row = await token_rows.token_for_session(db, sid)
        if row is None:
            raise Unauthenticated("The session has expired or was closed; sign in again.")
        return _principal(row, "ui")


async def open_session(app: AppState, secret: str) -> tuple[Principal, str]:
    """Sign in to the console; success and refusal are both audited (`session.open`)."""
    async with app.sessions.begin() as db:
        row = await token_rows.by_secret(db, secret)
        if row is not None:
            sid = await token_rows.open_session(db, row.id, app.settings.session_ttl_seconds)
            principal = _principal(row, "ui")
            await audit_log.append(db, principal=principal, action="session.open",
                                   target=f"token/{row.name}", result="ok")
            return principal, sid
    async with app.sessions.begin() as db:
        await audit_log.append(db, principal=ANONYMOUS, action="session.open", target="-",
                               result="error:unauthenticated")
    raise Unauthenticated("The token is unknown or revoked.")


async def close_session(app: AppState, sid: str) -> None:
    """Sign out: the session ends and the audit log says who left (`session.close`)."""
    async with app.sessions.begin() as db:
        row = await token_rows.token_for_session(db, sid)
        await token_rows.close_session(db, sid)
        if row is not None:
            await audit_log.append(db, principal=_principal(row, "ui"), action="session.close",
                                   target=f"token/{row.name}", result="ok")


async def ensure_admin_token(app: AppState) -> str | None:
    """On first start, create the admin token and return it once (None if one exists)."""
    async with app.sessions.begin() as db:
        return await token_rows.create_first(db, "admin", Role.ADMIN.value)


def _principal(row: TokenModel, face: Face) -> Principal:
    return Principal(name=row.name, role=Role(row.role), token_id=row.id, face=face)


def _touch(row: TokenModel) -> None:
    now = datetime.now(UTC)
    last = row.last_used_at
    if last is not None and last.tzinfo is None:
        last = last.replace(tzinfo=UTC)
    if last is None or last < now - _LAST_USED_GRANULARITY:
        row.last_used_at = now
