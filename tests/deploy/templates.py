"""The deployment's CloudFormation templates, decoded the way cfn-lint reads them."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from cfnlint.decode import cfn_yaml

ROOT = Path(__file__).resolve().parents[2]
CFN = ROOT / "deploy" / "cloudformation"
MAIN = CFN / "podplane.yaml"
_DECODED: dict[Path, dict[str, Any]] = {}


def templates() -> list[Path]:
    return sorted(CFN.glob("*.yaml"))


def load(path: Path = MAIN) -> dict[str, Any]:
    """A fresh copy each call: tests mutate it."""
    if path not in _DECODED:
        _DECODED[path] = cfn_yaml.load(str(path))
    return copy.deepcopy(_DECODED[path])
