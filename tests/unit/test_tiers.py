"""The e2e mark comes from what a test starts (tests/plugins/tiers.py, ADR 0014): a starter in
its body or in a function of its module it calls, not a name that merely looks alike."""

from __future__ import annotations

import subprocess

from tests.plugins.tiers import DEPTH, E2E_CALLS, names_used


def _judge() -> None:
    subprocess.run(["true"], check=True)


def _through_a_helper() -> None:
    _judge()


def _pure() -> int:
    return len("subprocess")  # a string is not a start


# Named through a dict, so that these tests (which start nothing) are not marked themselves.
FUNCTIONS = {"helper": _through_a_helper, "pure": _pure}


def test_a_start_two_calls_deep_is_seen() -> None:
    assert "subprocess" in names_used(FUNCTIONS["helper"], DEPTH)  # type: ignore[arg-type]


def test_a_pure_function_starts_nothing() -> None:
    assert E2E_CALLS.isdisjoint(names_used(FUNCTIONS["pure"], DEPTH))  # type: ignore[arg-type]
