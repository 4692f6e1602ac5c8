"""The image's install steps in a clean virtualenv (no container builder on this machine):
deploy/clean_install.py installs the product alone, as the Dockerfile's build stage does."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from podplane import __version__

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "deploy"))
import clean_install  # noqa: E402


@pytest.mark.slow
def test_the_product_alone_serves_real_aws_and_refuses_a_loopback_endpoint(
        tmp_path: Path) -> None:
    report = clean_install.check(tmp_path / "venv")
    assert report["importable"] == []  # no moto, no podplane_sandbox, no werkzeug
    assert report["serve"]["health"] == {"status": "ok", "version": __version__}, report["serve"]
    refused = report["loopback_endpoint"]
    assert refused["exit"] == 1
    assert "a loopback address" in refused["output"]
    assert "Traceback" not in refused["output"]
    assert report["site_packages_bytes"] > 10_000_000  # the dependencies did install
