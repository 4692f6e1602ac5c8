"""Real-AWS mode resolves its region and endpoint as boto3 and the AWS CLI do, and refuses a
loopback AWS endpoint (a leftover sandbox env file would otherwise redirect "real" calls)."""

from __future__ import annotations

from pathlib import Path

import pytest

from podplane.bootstrap import build_state
from podplane.domain.errors import ConfigError
from podplane.settings import Settings

AWS_VARS = ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_ENDPOINT_URL",
            "PODPLANE_REGION", "PODPLANE_AWS_ENDPOINT_URL")


@pytest.fixture
def no_aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    for var in AWS_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    return monkeypatch


def _real(tmp_path: Path, **kw: str) -> Settings:
    return Settings(home=tmp_path / "home", database_url=f"sqlite:///{tmp_path / 'db'}",
                    backend="aws", **kw)  # type: ignore[arg-type]


def test_region_comes_from_the_boto3_chain(no_aws_env: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    no_aws_env.setenv("AWS_REGION", "eu-central-1")
    assert build_state(_real(tmp_path)).settings.region == "eu-central-1"
    (tmp_path / "no-config").write_text("[default]\nregion = ap-northeast-1\n")
    no_aws_env.delenv("AWS_REGION")
    assert build_state(_real(tmp_path)).settings.region == "ap-northeast-1"
    assert build_state(_real(tmp_path, region="us-east-2")).settings.region == "us-east-2"


def test_no_region_anywhere_is_a_clear_error(no_aws_env: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="No AWS region") as caught:
        build_state(_real(tmp_path))
    assert caught.value.code == "config_invalid" and "AWS_REGION" in (caught.value.hint or "")


@pytest.mark.parametrize("url", ["http://127.0.0.1:4566", "http://localhost:4566",
                                 "http://[::1]:4566"])
def test_real_aws_refuses_a_loopback_endpoint(no_aws_env: pytest.MonkeyPatch, tmp_path: Path,
                                              url: str) -> None:
    no_aws_env.setenv("AWS_REGION", "us-west-2")
    no_aws_env.setenv("AWS_ENDPOINT_URL", url)
    with pytest.raises(ConfigError, match="loopback") as caught:
        build_state(_real(tmp_path))
    assert "AWS_ENDPOINT_URL" in (caught.value.hint or "")


def test_the_sandbox_keeps_its_own_region(no_aws_env: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:
    no_aws_env.setenv("AWS_REGION", "eu-west-1")
    settings = Settings(home=tmp_path / "home", database_url=f"sqlite:///{tmp_path / 'db'}")
    assert build_state(settings).settings.region == "us-west-2"


def test_the_job_stall_threshold_is_a_bounded_setting(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    from pydantic import ValidationError

    monkeypatch.setenv("PODPLANE_JOB_STALL_SECONDS", "1800")
    assert Settings(home=tmp_path).job_stall_seconds == 1800
    monkeypatch.setenv("PODPLANE_JOB_STALL_SECONDS", "5")  # a slow step is not a hang
    with pytest.raises(ValidationError, match="job_stall_seconds"):
        Settings(home=tmp_path)
