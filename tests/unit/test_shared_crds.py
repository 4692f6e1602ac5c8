"""Without the upstream CRDs (../shared/crds) the suite stops at one message naming what is
missing (tests/conftest.py), not at import errors in every module that reads them."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import CRD_SETS, missing_crds


def test_no_crds_folder_is_named(tmp_path: Path) -> None:
    gone = tmp_path / "crds"
    assert missing_crds(gone) == f"the upstream CRDs are missing: no {gone}"


def test_a_missing_set_is_named(tmp_path: Path) -> None:
    for name in CRD_SETS:
        if name not in ("keda", "lws"):
            (tmp_path / name).mkdir()
    said = missing_crds(tmp_path)
    assert said == f"the upstream CRDs are incomplete: {tmp_path} has no keda, lws"


def test_all_there_is_nothing_to_say(tmp_path: Path) -> None:
    for name in CRD_SETS:
        (tmp_path / name).mkdir()
    assert missing_crds(tmp_path) is None
