"""Migrations produce exactly the schema the models declare, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine

from podplane.store.db import migrate, sync_url
from podplane.store.models import Base


@pytest.mark.postgres
def test_migrations_match_models(db_url: str) -> None:
    migrate(db_url)
    migrate(db_url)  # idempotent on every start
    engine = create_engine(sync_url(db_url))
    try:
        with engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    finally:
        engine.dispose()
    assert diff == []
