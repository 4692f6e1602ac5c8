"""Two replicas started at once on one database (HA on PostgreSQL): both migrate, one admin."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest
from sqlalchemy import create_engine, text

from podplane.bootstrap import build_app
from podplane.services.access.auth import ensure_admin_token
from podplane.settings import Settings
from podplane.store.db import sync_url


@pytest.mark.postgres
def test_four_replicas_migrating_a_fresh_database_at_once_all_succeed(db_url: str) -> None:
    # Processes, as replicas are (alembic's context is process-global, not thread-safe).
    probe = "import sys; from podplane.store.db import migrate; migrate(sys.argv[1])"
    replicas = [subprocess.Popen([sys.executable, "-c", probe, db_url], stderr=subprocess.PIPE)
                for _ in range(4)]
    errors = [p.communicate(timeout=120)[1].decode() for p in replicas]
    assert [p.returncode for p in replicas] == [0] * 4, errors
    engine = create_engine(sync_url(db_url))
    try:
        with engine.connect() as conn:
            versions = conn.execute(text("SELECT version_num FROM alembic_version")).all()
    finally:
        engine.dispose()
    assert len(versions) == 1


@pytest.mark.postgres
async def test_replicas_racing_for_the_first_admin_token_make_exactly_one(
        db_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    apps = [build_app(Settings(home=tmp_path / f"r{i}", database_url=db_url)) for i in range(4)]
    contexts = [a.router.lifespan_context(a) for a in apps]
    for c in contexts:
        await c.__aenter__()
    try:
        states = [a.state.podplane for a in apps]
        secrets = await asyncio.gather(*(ensure_admin_token(s) for s in states))
        async with states[0].sessions() as db:
            admins = (await db.execute(text("SELECT name FROM tokens"))).scalars().all()
    finally:
        for c in contexts:
            await c.__aexit__(None, None, None)
    assert len([s for s in secrets if s]) == 1
    assert admins == ["admin"]
