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


def test_the_home_and_its_state_are_private_when_the_sandbox_starts_first(
        tmp_path: Path) -> None:
    """Issue 34, S8: a home the sandbox makes (or finds wider) is 0700, its state files 0600,
    files an older version left at 0644 included; the kube store holds Secrets (HF tokens)."""
    from podplane_sandbox.kube.store import write_atomically
    from podplane_sandbox.main import Sandbox

    home = tmp_path / "home"
    (home / "sandbox").mkdir(parents=True)
    home.chmod(0o755)
    stale = home / "sandbox" / "kube-store.json"
    stale.write_text("{}")
    stale.chmod(0o644)
    sandbox = Sandbox(home)
    sandbox.store.save()
    write_atomically(home / "sandbox" / "kube-store.json", '{"rv": 1}')
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (home / "sandbox").iterdir()}
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE((home / "sandbox").stat().st_mode) == 0o700
    assert modes["kube-store.json"] == modes["aws-state.json"] == 0o600, modes
    assert set(modes.values()) == {0o600}, modes
