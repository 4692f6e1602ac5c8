"""The crash sweep's `create` shard (from an empty cloud) and the test that every registered
workflow kind is swept in exactly one shard (tests/crash/sweep.py)."""

from __future__ import annotations

import pytest

from tests.crash.sweep import DRIVERS, SHARDS, registered_kinds, shard_module

pytestmark = pytest.mark.slow
world, test_crash_sweep = shard_module("create")


def test_every_kind_is_swept() -> None:
    assert sorted(DRIVERS) == registered_kinds(), "a workflow kind has no sweep driver"
    sharded = [kind for kinds in SHARDS.values() for kind in kinds]
    assert sorted(sharded) == sorted(DRIVERS), "a kind is in no shard, or in two"
