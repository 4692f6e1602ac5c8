"""Authentication: bearer tokens and console sessions. Not role-gated: this is the gate.

The face a principal acts through is derived from how it authenticated, never from a header:
a console cookie is `ui`, a bearer token on the MCP endpoint (and the in-process REST calls its
tools make) is `agent`, any other bearer token is `api`, and the local CLI is `cli`.
"""

from __future__ import annotations

import asyncio
import getpass
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from datetime import UTC, datetime, timedelta

from podplane.domain.effects import Role
from podplane.domain.errors import Unauthenticated
from podplane.domain.principal import ANONYMOUS, Face, Principal
from podplane.services.access.lookups import TTL_SECONDS, lookups_of
from podplane.services.access.strangers import strangers_of
from podplane.services.context import AppState
from podplane.store import audit_log
from podplane.store import tokens as token_rows
from podplane.store.models import TokenModel

_LAST_USED_GRANULARITY = timedelta(minutes=1)
_VIA_MCP: ContextVar[bool] = ContextVar("podplane_via_mcp", default=False)


@contextmanager
def acting_for_mcp() -> Iterator[None]:
    """Around the in-process REST call an MCP tool makes: its bearer token acts as `agent`."""
    token = _VIA_MCP.set(True)
    try:
        yield
    finally:
        _VIA_MCP.reset(token)


def bearer_face() -> Face:
    return "agent" if _VIA_MCP.get() else "api"


def local_principal() -> Principal:
    """Who the CLI acts as on the local database: the OS user, audited as `local:<user>`."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry and no USER/LOGNAME
        user = "unknown"
    return Principal(name=f"local:{user}"[:64], role=Role.ADMIN, token_id="local", face="cli")


async def principal_for_token(app: AppState, secret: str, face: Face,
                              address: str | None = None) -> Principal:
    """`address`: the client's, whose failed attempts are budgeted (strangers.py)."""
    async def load() -> Principal:
        async with app.sessions.begin() as db:
            row = await token_rows.by_secret(db, secret)
            if row is None:
                raise Unauthenticated("The token is unknown or revoked.")
            _touch(row)
            return _principal(row, face)

    principal = await _guarded(app, "token", secret, load, address)
    return principal.with_face(face)


async def principal_for_session(app: AppState, sid: str,
                                address: str | None = None) -> Principal:
    async def load() -> Principal:
        async with app.sessions() as db:
            row = await token_rows.token_for_session(db, sid)
            if row is None:
                raise Unauthenticated("The session has expired or was closed; sign in again.")
            return _principal(row, "ui")

    return await _guarded(app, "session", sid, load, address)


async def _guarded(app: AppState, kind: str, secret: str,
                   load: Callable[[], Awaitable[Principal]], address: str | None) -> Principal:
    lookups = lookups_of(app.sessions)
    if address is None:
        return await lookups.once(kind, secret, load)
    guard = strangers_of(app)
    if lookups.get(kind, secret) is None:
        guard.check(address)   # 429 before the look-up while the address keeps failing
    try:
        return await lookups.once(kind, secret, load)
    except Unauthenticated:
        guard.failed(address)
        raise


async def still_valid(app: AppState, token_id: str) -> bool:
    async with app.sessions() as db:
        row = await token_rows.by_id(db, token_id)
    return row is not None and row.revoked_at is None


async def until_revoked(app: AppState, token_id: str) -> None:
    """Return once the token is revoked: at once in this process (the revocation wakes us),
    within TTL_SECONDS when another replica revoked it (we re-read the row)."""
    async with lookups_of(app.sessions).watching(token_id) as revoked:
        while True:
            with suppress(TimeoutError):
                await asyncio.wait_for(revoked.wait(), timeout=TTL_SECONDS)
            if revoked.is_set() or not await still_valid(app, token_id):
                return


def forget_token(app: AppState, token_id: str) -> None:
    lookups_of(app.sessions).revoked(token_id)


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
    lookups_of(app.sessions).drop("session", sid)
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
