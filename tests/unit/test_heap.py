"""The collector's tuning for `podplane serve` (podplane.heap, ADR 0011): a new AWS client's
service model is frozen out of full collections, once per service, and only in a tuned
process. The tuned state is process-wide, so the fixture puts Python's defaults back."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from podplane import heap
from podplane.cloud.aws.caller import AwsCaller


@pytest.fixture
def tuned() -> Iterator[None]:
    threshold = gc.get_threshold()
    heap.tune(10_000)
    try:
        yield
    finally:
        heap._tuned = False
        gc.unfreeze()
        gc.set_threshold(*threshold)


def _caller() -> AwsCaller:
    return AwsCaller("us-west-2", endpoint_url="http://127.0.0.1:9")  # never called


def test_a_new_clients_model_is_frozen_once(tuned: None) -> None:
    assert gc.get_threshold()[0] == 10_000
    caller, before = _caller(), gc.get_freeze_count()
    caller.client("sagemaker")
    frozen = gc.get_freeze_count()
    assert frozen - before > 10_000  # SageMaker's model: tens of thousands of containers
    caller.client("sagemaker")
    # the same client: nothing new frozen (frozen objects may still be freed by refcount)
    assert gc.get_freeze_count() <= frozen


def test_an_untuned_process_freezes_nothing() -> None:
    before = gc.get_freeze_count()
    _caller().client("eks")
    assert gc.get_freeze_count() == before


def test_threshold_zero_leaves_the_collector_untouched() -> None:
    threshold, before = gc.get_threshold(), gc.get_freeze_count()
    heap.tune(0)
    _caller().client("eks")
    assert (gc.get_threshold(), gc.get_freeze_count(), heap._tuned) == (threshold, before, False)
