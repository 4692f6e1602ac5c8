"""One podplane-created cluster per module (a copy of the run's golden world)."""

from __future__ import annotations

from tests.jobs.conftest import cluster  # noqa: F401 (fixture)
