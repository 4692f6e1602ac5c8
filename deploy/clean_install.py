"""The image's install steps in a clean virtualenv, for a machine without a container builder.

Runs what the Dockerfile's build stage runs (`pip install .`, the product alone), then what
the runtime image promises: `podplane serve` with PODPLANE_BACKEND=aws starts and answers
/api/v1/health, neither moto nor podplane_sandbox can be imported, a loopback AWS endpoint is
refused at start, and how large the install is. Prints one JSON object.

Usage: python deploy/clean_install.py [--venv DIR]   (a temporary folder when not given)
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = ("moto", "podplane_sandbox", "werkzeug")
START_SECONDS = 60


def install(venv: Path) -> None:
    """The build stage's steps on the same files (`COPY pyproject.toml README.md ./`,
    `COPY src ./src`), so the working copy's build leftovers cannot leak in."""
    with tempfile.TemporaryDirectory(prefix="podplane-context-") as context:
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(ROOT / name, context)
        shutil.copytree(ROOT / "src", Path(context) / "src",
                        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q",
                        "--disable-pip-version-check", "."], cwd=context, check=True)


def site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def size_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def importable(venv: Path) -> list[str]:
    probe = ("import importlib.util, json, sys; print(json.dumps([m for m in sys.argv[1:] "
             "if importlib.util.find_spec(m)]))")
    out = subprocess.run([str(venv / "bin" / "python"), "-c", probe, *FORBIDDEN],
                         capture_output=True, text=True, check=True, env=clean_env())
    return list(json.loads(out.stdout))


def clean_env(**extra: str) -> dict[str, str]:
    """The image's environment: real AWS, no leftovers of a developer's shell."""
    keep = {k: v for k, v in os.environ.items()
            if not k.startswith(("AWS_", "PODPLANE_", "PYTHON", "VIRTUAL_ENV"))}
    return {**keep, "PODPLANE_BACKEND": "aws", "AWS_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": "AKIAEXAMPLEEXAMPLE00", "AWS_SECRET_ACCESS_KEY": "example",
            "AWS_EC2_METADATA_DISABLED": "true", **extra}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_and_ask_health(venv: Path, home: Path) -> dict[str, Any]:
    port = free_port()
    env = clean_env(PODPLANE_HOME=str(home), PODPLANE_HOST="127.0.0.1",
                    PODPLANE_PORT=str(port))
    child = subprocess.Popen([str(venv / "bin" / "podplane"), "serve"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    started = time.monotonic()
    try:
        while time.monotonic() - started < START_SECONDS:
            if child.poll() is not None:
                return {"health": None, "exit": child.returncode, "output": child.stdout.read()}
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/health",
                                            timeout=2) as answer:
                    return {"health": json.loads(answer.read()),
                            "seconds": round(time.monotonic() - started, 1)}
            except OSError:
                time.sleep(0.3)
        return {"health": None, "exit": "timeout"}
    finally:
        child.terminate()
        child.wait(timeout=15)


def refuses_loopback(venv: Path, home: Path) -> dict[str, Any]:
    env = clean_env(PODPLANE_HOME=str(home), PODPLANE_PORT=str(free_port()),
                    AWS_ENDPOINT_URL="http://127.0.0.1:4566")
    run = subprocess.run([str(venv / "bin" / "podplane"), "serve"], env=env,
                         capture_output=True, text=True, timeout=START_SECONDS)
    return {"exit": run.returncode, "output": " ".join((run.stdout + run.stderr).split())}


def check(venv: Path) -> dict[str, Any]:
    install(venv)
    with tempfile.TemporaryDirectory(prefix="podplane-home-") as home:
        return {"site_packages_bytes": size_bytes(site_packages(venv)),
                "importable": importable(venv),
                "serve": serve_and_ask_health(venv, Path(home) / "a"),
                "loopback_endpoint": refuses_loopback(venv, Path(home) / "b")}


def main(argv: list[str]) -> int:
    if "--venv" in argv:
        report = check(Path(argv[argv.index("--venv") + 1]))
    else:
        with tempfile.TemporaryDirectory(prefix="podplane-clean-venv-") as tmp:
            report = check(Path(tmp) / "venv")
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
