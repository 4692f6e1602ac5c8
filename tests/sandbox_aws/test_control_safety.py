"""The sandbox endpoint refuses what a web page could send it (docs/sandbox.md "Control API
safety"): control routes need the env file's secret; foreign Origin and Host are refused."""

from __future__ import annotations

import stat
from pathlib import Path

import httpx
import pytest

from podplane_sandbox.main import Sandbox
from tests.sandbox_aws.conftest import Box

STS_CALL = {"Action": "GetCallerIdentity", "Version": "2011-06-15"}


@pytest.mark.parametrize("path", ["/_sandbox/clock", "/moto-api/config"])
def test_control_routes_need_the_secret(box: Box, path: str) -> None:
    assert httpx.get(f"{box.url}{path}").status_code == 401
    wrong = {"X-Podplane-Sandbox-Secret": "guess"}
    assert httpx.get(f"{box.url}{path}", headers=wrong).status_code == 401
    assert httpx.get(f"{box.url}{path}", headers=box.sandbox.control_headers).is_success


def test_a_reset_without_the_secret_changes_nothing(box: Box) -> None:
    box.client("ec2").create_vpc(CidrBlock="10.9.0.0/16")
    assert httpx.post(f"{box.url}/_sandbox/reset", json={}).status_code == 401
    assert httpx.post(f"{box.url}/moto-api/reset").status_code == 401
    vpcs = box.client("ec2").describe_vpcs()["Vpcs"]
    assert any(v["CidrBlock"] == "10.9.0.0/16" for v in vpcs)


def test_a_foreign_origin_is_refused_even_with_the_secret(box: Box) -> None:
    secret = box.sandbox.control_headers
    for origin in ("https://evil.example", "null", "http://localhost:1"):
        r = httpx.get(f"{box.url}/_sandbox/clock", headers={**secret, "Origin": origin})
        assert r.status_code == 403, origin
        r = httpx.post(box.url, data=STS_CALL, headers={"Origin": origin})  # the AWS side too
        assert r.status_code == 403, origin
    own = f"http://127.0.0.1:{box.sandbox.aws_port}"
    r = httpx.get(f"{box.url}/_sandbox/clock", headers={**secret, "Origin": own})
    assert r.status_code == 200


def test_a_non_loopback_host_is_refused(box: Box) -> None:
    """DNS rebinding: a name the attacker controls resolving to 127.0.0.1."""
    secret = box.sandbox.control_headers
    for host in ("evil.example", f"evil.example:{box.sandbox.aws_port}", "10.0.0.1"):
        r = httpx.get(f"{box.url}/_sandbox/clock", headers={**secret, "Host": host})
        assert r.status_code == 403, host
        assert httpx.post(box.url, data=STS_CALL, headers={"Host": host}).status_code == 403
    for host in ("localhost", "127.0.0.1", f"localhost:{box.sandbox.aws_port}"):
        r = httpx.get(f"{box.url}/_sandbox/clock", headers={**secret, "Host": host})
        assert r.status_code == 200, host


def test_moto_sends_no_cors_grant(box: Box) -> None:
    own = f"http://127.0.0.1:{box.sandbox.aws_port}"
    # an IAM call moto serves (STS GetCallerIdentity is the sandbox's own, and wants a key)
    r = httpx.post(box.url, data={"Action": "ListRoles", "Version": "2010-05-08"}, headers={
        "Origin": own, "Authorization": "AWS4-HMAC-SHA256 Credential=test/20261202/us-east-1/"
        "iam/aws4_request, SignedHeaders=host, Signature=0"})
    assert r.status_code == 200
    assert "access-control-allow-origin" not in r.headers


def test_env_file_is_private_exports_the_secret_and_keeps_it(
        box: Box, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PODPLANE_SANDBOX_SECRET", raising=False)
    env = tmp_path / "sandbox" / "env"
    assert stat.S_IMODE(env.stat().st_mode) == 0o600
    secret = box.sandbox.secret
    assert len(secret) >= 32
    assert f"export PODPLANE_SANDBOX_SECRET={secret}\n" in env.read_text()
    assert Sandbox(tmp_path).secret == secret  # a restart keeps it: clients keep working
    assert Sandbox(tmp_path / "other").secret != secret  # a new home: a new random one


def test_print_env_shows_the_secret_the_next_start_uses(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from podplane.cli import app

    monkeypatch.delenv("PODPLANE_SANDBOX_SECRET", raising=False)
    done = CliRunner().invoke(app, ["sandbox", "--print-env", "--home", str(tmp_path)])
    assert done.exit_code == 0, done.output
    printed = next(line.split("=", 1)[1] for line in done.output.splitlines()
                   if line.startswith("export PODPLANE_SANDBOX_SECRET="))
    assert Sandbox(tmp_path).secret == printed
