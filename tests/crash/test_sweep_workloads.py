"""The crash sweep's `workloads` shard, on a private copy of the run's golden swept cluster
(tests/crash/sweep.py)."""

from __future__ import annotations

import pytest

from tests.crash.sweep import shard_module

pytestmark = pytest.mark.slow
world, test_crash_sweep = shard_module("workloads")
