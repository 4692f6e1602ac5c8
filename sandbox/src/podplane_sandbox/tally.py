"""What a test run costs, counted where it happens: with PODPLANE_TEST_TALLY naming a file (the
test suite's measure plugin sets it, tests/plugins/measure.py), every sandbox start, Kubernetes
API start and cluster create appends one JSON line to it, from this process or any child the
tests start (`podplane sandbox`, `podplane serve`). Unset (every real use), this does nothing.
"""

from __future__ import annotations

import json
import os
from typing import Any

TALLY_ENV = "PODPLANE_TEST_TALLY"
MODULE_ENV = "PODPLANE_TEST_MODULE"  # the test module running when this process started
# The tag podplane's own create puts on every cluster (podplane.services.clusters.network):
# how a count tells a create through podplane from one a test made in the sandbox directly.
MANAGED_TAG = "podplane:managed"


def note(event: str, **fields: Any) -> None:
    path = os.environ.get(TALLY_ENV)
    if not path:
        return
    line = json.dumps({"event": event, "module": os.environ.get(MODULE_ENV), "pid": os.getpid(),
                       **fields}) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:  # one write of one short line: O_APPEND keeps lines from several processes whole
        os.write(fd, line.encode())
    finally:
        os.close(fd)
