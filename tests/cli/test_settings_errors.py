"""A bad PODPLANE_* variable stops the CLI with its name and the rule, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from podplane.cli import app


@pytest.mark.parametrize(("variable", "value", "said"), [
    ("PODPLANE_EVENT_LOOP", "tokio", "'asyncio' or 'uvloop'"),
    ("PODPLANE_YOUNG_GC_THRESHOLD", "5", "must be 0 (Python's collector untouched)"),
    ("PODPLANE_YOUNG_GC_THRESHOLD", "-1", "greater than or equal to 0"),
    ("PODPLANE_RATE_PER_SECOND", "-1", "greater than 0"),
])
def test_a_bad_variable_is_named_and_nothing_starts(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, variable: str, value: str,
        said: str) -> None:
    monkeypatch.setenv(variable, value)
    result = CliRunner().invoke(app, ["serve", "--home", str(tmp_path), "--port", "1"])
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert f"error (invalid_input): {variable}:" in text and said in text
    assert "Traceback" not in text
    assert list(tmp_path.iterdir()) == []  # refused before the database or token file
