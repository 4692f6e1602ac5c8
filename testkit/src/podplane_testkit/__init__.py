"""podplane's test kit: loaded by the composition root only when PODPLANE_TEST_WORKFLOWS=1."""

from __future__ import annotations

from podplane.bootstrap import TestKit
from podplane_testkit import crash, routes, touch


def kit() -> TestKit:
    """The entry point (group "podplane.testkit") bootstrap loads."""
    return TestKit(workflows=touch.declare, on_point=crash.at_point, routers=(routes.router,))
