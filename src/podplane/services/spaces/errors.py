"""Refusals of space requests."""

from __future__ import annotations

from podplane.domain.errors import Conflict


class SpaceExists(Conflict):
    code = "space_exists"
