"""What podplane writes under PODPLANE_HOME (token hashes, sessions, audit) is the owner's alone."""

from __future__ import annotations

import stat
from pathlib import Path

from podplane.bootstrap import build_app
from podplane.services.access.auth import ensure_admin_token
from podplane.settings import Settings


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_home_is_0700_and_the_database_files_0600(tmp_path: Path) -> None:
    home = tmp_path / "home"
    app = build_app(Settings(home=home, database_url=f"sqlite:///{home / 'podplane.db'}"))
    async with app.router.lifespan_context(app):
        assert await ensure_admin_token(app.state.podplane)
        written = sorted(p.name for p in home.iterdir() if p.name.startswith("podplane.db"))
        modes = {p.name: _mode(p) for p in home.iterdir() if p.name.startswith("podplane.db")}
    assert _mode(home) == 0o700
    assert "podplane.db" in written and "podplane.db-wal" in written
    assert set(modes.values()) == {0o600}, modes


async def test_a_home_someone_made_wider_is_narrowed_to_0700(tmp_path: Path) -> None:
    """Issue 34, S8: the sandbox (or a user) may have made the home first at 0755."""
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    home.chmod(0o755)
    app = build_app(Settings(home=home, database_url=f"sqlite:///{home / 'podplane.db'}"))
    async with app.router.lifespan_context(app):
        pass
    assert _mode(home) == 0o700
