"""Engine and session factory; migrations run on start."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, event, text
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine

MIGRATIONS = Path(__file__).parent / "migrations"


def async_url(url: str) -> str:
    """Map a user-facing URL to the async driver we ship."""
    if url.startswith("sqlite:///"):
        return "sqlite+aiosqlite:///" + url.removeprefix("sqlite:///")
    for prefix in ("postgresql://", "postgres://", "postgresql+psycopg2://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url.removeprefix(prefix)
    return url


def sync_url(url: str) -> str:
    return async_url(url).replace("sqlite+aiosqlite://", "sqlite://")


# Any constant shared by every replica; PostgreSQL advisory locks are keyed by a bigint.
MIGRATION_LOCK_KEY = 0x706F64706C616E65  # "podplane"


def migrate(url: str) -> None:
    """Bring the schema to head. Safe to call on every start, and from several replicas at once:
    the first holds the migration lock and migrates; the others wait, then find head."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", sync_url(url).replace("%", "%%"))
    with _migration_lock(url):
        command.upgrade(cfg, "head")


@contextmanager
def _migration_lock(url: str) -> Iterator[None]:
    if url.startswith("sqlite:///"):
        with _file_lock(Path(url.removeprefix("sqlite:///"))):
            yield
        return
    if not async_url(url).startswith("postgresql"):
        yield
        return
    # A session-level advisory lock, held on its own connection for the whole upgrade
    # (PostgreSQL docs, "Advisory Locks": pg_advisory_lock waits until it is granted).
    engine = create_engine(sync_url(url))
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": MIGRATION_LOCK_KEY})
            try:
                yield
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": MIGRATION_LOCK_KEY})
    finally:
        engine.dispose()


@contextmanager
def _file_lock(db_file: Path) -> Iterator[None]:
    """SQLite lives on one host: an exclusive flock beside the database file serialises starts."""
    db_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    # Created 0600 before SQLite opens it: SQLite gives its -wal and -shm files the database
    # file's permissions (sqlite.org, "Write-Ahead Logging", and the unix VFS).
    os.close(os.open(db_file, os.O_RDWR | os.O_CREAT, 0o600))
    fd = os.open(db_file.with_name(db_file.name + ".migrate.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def make_engine(url: str) -> AsyncEngine:
    aurl = async_url(url)
    if aurl.startswith("sqlite"):
        engine = create_async_engine(aurl, connect_args={"timeout": 30})
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    return create_async_engine(aurl, pool_size=10, max_overflow=20, pool_pre_ping=True)


def _sqlite_pragmas(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def make_sessionmaker(engine: AsyncEngine) -> async_sessionmaker:  # type: ignore[type-arg]
    return async_sessionmaker(engine, expire_on_commit=False)
