"""The sandbox unpickles moto's state only from a file this user wrote (pickle runs code)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from podplane_sandbox.aws import moto_side


def test_saved_state_is_0600_and_loads_back(tmp_path: Path) -> None:
    path = tmp_path / "moto-state.pickle"
    moto_side.save(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    moto_side.load(path)  # a file we wrote is trusted


def test_a_state_file_others_can_write_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "moto-state.pickle"
    # Unpickling this would create a marker file: the refusal must come first.
    marker = tmp_path / "ran"
    path.write_bytes(b"cos\nsystem\n(S'touch " + str(marker).encode() + b"'\ntR.")
    path.chmod(0o666)
    with pytest.raises(moto_side.UntrustedState, match="not owned by this user or is writable"):
        moto_side.load(path)
    assert not marker.exists()
