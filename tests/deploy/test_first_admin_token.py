"""The first admin token never reaches the server's output (logs, journald, CloudWatch): it is
written to a 0600 file under PODPLANE_HOME, and the output only says where (docs/deploy.md)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests.served import ControlPlane


@pytest.mark.slow
def test_the_first_admin_token_is_in_a_0600_file_and_never_in_the_output(
        tmp_path: Path) -> None:
    server = ControlPlane(tmp_path / "home")
    server.start()
    try:
        token_file = server.home / "admin-token"
        secret = token_file.read_text().strip()
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        with server.api(secret) as api:  # it is the admin token: it lists the tokens
            names = [t["name"] for t in api.get("/api/v1/tokens").raise_for_status().json()]
        assert names == ["admin"]
        server.stop()
        output = server.log.read_text()  # the process's stdout and stderr
        assert str(token_file) in output
        assert secret not in output and secret[:12] not in output

        token_file.unlink()  # read once, deleted; a restart mints no other token
        server.start()
        server.stop()
        assert not token_file.exists()
        assert secret not in server.log.read_text()
    finally:
        server.stop()
