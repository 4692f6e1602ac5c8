"""The cyclic collector's settings for a long-running `podplane serve` (ADR 0011).

A full collection walks every tracked object that is not frozen, with the event loop stopped.
What lives as long as the process (modules, the app, botocore's service models) is frozen out
of those walks, and young collections run less often, so fewer short-lived request objects are
promoted into the generation a full collection walks. Nothing here happens unless `tune` was
called: tests and the CLI keep Python's defaults.
"""

from __future__ import annotations

import gc

_tuned = False


def tune(young_threshold: int) -> None:
    """Freeze what start-up built and move the young generation's threshold; 0 leaves the
    collector as Python sets it (the benches' "before")."""
    global _tuned
    if young_threshold == 0:
        return
    _tuned = True
    settle()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(young_threshold, older, oldest)


def settle() -> None:
    """Something that lives as long as the process was just built: freeze it too.

    Called when an AWS client is first made for a service (`cloud.aws.caller`): its service
    model is loaded then, lazily. SageMaker's alone is ~60,000 containers, which made each full
    collection a ~110 ms stall of every request in flight (bench/fleet_status.py). A collection
    first, so no garbage cycle is frozen; bounded by the number of AWS services used, so the
    objects in flight that get frozen with it (and would leak if they later formed a garbage
    cycle) are a few requests' worth, once."""
    if _tuned:
        gc.collect()
        gc.freeze()
