"""The secret the sandbox's control API (`/_sandbox`) asks for, as the product finds it.

The sandbox writes it to its env file (`<home>/sandbox/env`, mode 0600) as
PODPLANE_SANDBOX_SECRET; a shell that sourced that file has it in the environment. The sandbox
(podplane_sandbox.guard) reads these names from here: the product never imports the sandbox.
"""

from __future__ import annotations

import os
from pathlib import Path

SECRET_HEADER = "X-Podplane-Sandbox-Secret"
SECRET_ENV = "PODPLANE_SANDBOX_SECRET"


def sandbox_secret(sandbox_dir: Path | None = None) -> str | None:
    """PODPLANE_SANDBOX_SECRET, else the value in `sandbox_dir`'s env file, else None."""
    if os.environ.get(SECRET_ENV):
        return os.environ[SECRET_ENV]
    if sandbox_dir is None:
        return None
    try:
        lines = (sandbox_dir / "env").read_text().splitlines()
    except OSError:
        return None
    prefix = f"export {SECRET_ENV}="
    return next((line[len(prefix):] for line in lines if line.startswith(prefix)), None)


def control_headers(secret: str | None) -> dict[str, str]:
    return {SECRET_HEADER: secret} if secret else {}
