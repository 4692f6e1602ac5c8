"""The sandbox is its own distribution: the product neither depends on nor imports it."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import requires

from typer.testing import CliRunner


def _names(dist: str) -> set[str]:
    return {r.split(";")[0].split("[")[0].split("=")[0].split(">")[0].split("<")[0].strip()
            for r in requires(dist) or []}


def test_moto_is_a_dependency_of_the_sandbox_not_of_the_product() -> None:
    assert "moto" not in _names("podplane")
    assert {"moto", "podplane"} <= _names("podplane-sandbox")


def test_serving_the_product_loads_neither_the_sandbox_nor_moto() -> None:
    probe = ("import sys, podplane.bootstrap, podplane.server, podplane.api.app, "
             "podplane.mcp.server;"
             "loaded = sorted(m for m in sys.modules if m.split('.')[0] in "
             "('podplane_sandbox', 'moto', 'werkzeug'));"
             "print(','.join(loaded))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == ""


def test_without_the_sandbox_package_the_command_says_how_to_install_it() -> None:
    probe = ("import sys; sys.modules['podplane_sandbox'] = None;"
             "from typer.testing import CliRunner; from podplane.cli import app;"
             "r = CliRunner().invoke(app, ['sandbox']);"
             "print(r.exit_code); print(r.output)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout
    code, _, text = out.partition("\n")
    assert code == "1"
    assert "pip install ./sandbox" in " ".join(text.split())


def test_with_the_sandbox_package_the_command_is_the_sandbox() -> None:
    from podplane.cli import app

    result = CliRunner().invoke(app, ["sandbox", "--help"])
    assert result.exit_code == 0
    assert "--kube-port" in result.output
