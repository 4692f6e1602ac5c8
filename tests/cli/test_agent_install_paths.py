"""`podplane agent install` writes only real files inside the project (issue 34, S9): a symlink
a checkout planted (to a file outside, or a folder pointing elsewhere) is refused before any
token is minted or any file written. No control plane needed: the refusal comes first."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from podplane.cli.main import app


def _install(project: Path, kind: str = "claude-code") -> int:
    result = CliRunner().invoke(app, ["agent", "install", kind, "--dir", str(project),
                                      "--home", str(project.parent / "home")])
    return result.exit_code


def test_a_clean_project_installs(tmp_path: Path) -> None:   # the refusals below can fail
    assert _install(tmp_path / "project") == 0
    assert (tmp_path / "project" / ".mcp.json").is_file()


@pytest.mark.parametrize("planted", [".podplane/.gitignore", ".mcp.json",
                                     ".claude/settings.json", ".claude/skills"])
def test_a_planted_symlink_is_refused_and_nothing_is_written(tmp_path: Path,
                                                             planted: str) -> None:
    project, victim = tmp_path / "project", tmp_path / "victim.json"
    victim.write_text(json.dumps({"keep": 1}))
    link = project / planted
    link.parent.mkdir(parents=True)
    link.symlink_to(victim if not planted.endswith("skills") else tmp_path,
                    target_is_directory=planted.endswith("skills"))
    assert _install(project) == 2
    assert json.loads(victim.read_text()) == {"keep": 1}
    assert not (project / ".podplane" / "agent-token").exists()
    assert not (tmp_path / "home").exists()   # no token minted


def test_a_linked_project_folder_that_resolves_outside_is_refused(tmp_path: Path) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    (project).mkdir()
    elsewhere.mkdir()
    (project / ".claude").symlink_to(elsewhere, target_is_directory=True)
    assert _install(project) == 2
    assert list(elsewhere.iterdir()) == []


def test_an_existing_podplane_folder_is_narrowed_to_0700(tmp_path: Path) -> None:
    from podplane.cli.agent import private_folder

    folder = tmp_path / ".podplane"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    private_folder(folder)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
