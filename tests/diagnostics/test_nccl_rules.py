"""The NCCL test's pure rules: nccl-tests' table read as mpirun prints it, the expected figures,
the pair rounds that name a slow node, and the workload against the upstream PyTorchJob CRD."""

from __future__ import annotations

import jsonschema
import pytest

from podplane.domain.diagnostics import nccl as rules
from podplane.domain.diagnostics.nccl_workload import Placement, render
from tests.jobs.test_manifests import pytorchjob_schema

# all_reduce_perf's layout (out-of-place then in-place columns) under mpirun --tag-output
P5_RUN = """\
[1,0]<stdout>:# nThread 1 nGpus 1 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 5
[1,0]<stdout>:#                                                              out-of-place                       in-place
[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
[1,0]<stdout>:#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
[1,0]<stdout>:           8             2     float     sum      -1    34.56    0.00    0.00      0    33.12    0.00    0.00      0
[1,0]<stdout>:   536870912     134217728     float     sum      -1   2801.4  191.64  359.33      0   2799.0  191.81  359.64      0
[1,0]<stdout>:  1073741824     268435456     float     sum      -1   5432.1  197.67  370.63      0   5430.2  197.74  370.76      0
[1,0]<stdout>:# Out of bounds values : 0 OK
[1,0]<stdout>:# Avg bus bandwidth    : 120.456
[1,3]<stdout>:ip-10-1-2-3:77:90 [3] NCCL INFO Using network AWS Libfabric
"""  # noqa: E501  (nccl-tests' own line width)


def test_the_table_is_read_at_its_largest_message_whatever_the_prefix() -> None:
    m = rules.parse(P5_RUN)
    assert [r.size for r in m.rows] == [8, 536870912, 1073741824]
    assert (m.busbw, m.avg_busbw, m.network) == (370.63, 120.456, "AWS Libfabric")
    assert rules.parse("no table here").busbw is None


def test_expected_figures_follow_network_bandwidth_and_efa() -> None:
    p5, p4d, g5 = (rules.expected(t) for t in ("ml.p5.48xlarge", "p4d.24xlarge",
                                               "ml.g5.xlarge"))
    assert p5 is not None and (p5.busbw, p5.efa, p5.threshold) == (400.0, 32, 320.0)
    assert p4d is not None and (p4d.busbw, p4d.efa) == (50.0, 4)
    # one of p4d's four EFA interfaces lost caps a ring at 75%: below the pass line
    assert p4d.busbw * 3 / 4 < p4d.threshold
    assert g5 is not None and g5.transport == "TCP sockets"
    assert rules.expected("ml.m5.xlarge") is None


def test_pairs_run_in_disjoint_batches_and_name_the_node_in_every_slow_pair() -> None:
    nodes = ["a", "b", "c", "d", "e"]
    pairs = rules.ring_pairs(nodes)
    assert pairs == [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("e", "a")]
    batches = rules.batches(pairs)
    assert sorted(p for b in batches for p in b) == sorted(pairs)
    for batch in batches:
        members = [n for p in batch for n in p]
        assert len(members) == len(set(members)), batch
    assert rules.ring_pairs(["a", "b"]) == []
    measured = [(p, 10.0 if "c" in p else 40.0) for p in pairs]
    assert rules.slow_nodes(measured, 30.0) == ["c"]
    assert rules.slow_nodes([(p, 10.0) for p in pairs], 30.0) == []  # the fabric, not a node


def test_a_fast_run_on_sockets_where_efa_exists_is_still_a_failure() -> None:
    sockets = P5_RUN.replace("AWS Libfabric", "Socket")
    verdict = rules.diagnose(rules.NcclFacts("c", ("i-1", "i-2"), "ml.p5.48xlarge",
                                             {"i-1": 32, "i-2": 31}, rules.parse(sockets)))
    checks = {f.check for f in verdict.findings}
    assert checks == {"not_efa", "efa_missing"}, verdict
    assert verdict.next is not None and verdict.next.arguments["node"] == "i-2"


def test_the_workload_passes_the_upstream_crd_and_asks_for_whole_nodes() -> None:
    schema = pytorchjob_schema()
    job = render("nccl-x-all", "op-x", Placement(("hyperpod-i-1", "hyperpod-i-2",
                                                  "hyperpod-i-3"), 8, 32))
    jsonschema.validate(job, schema)
    specs = job["spec"]["pytorchReplicaSpecs"]
    assert specs["Master"]["replicas"] + specs["Worker"]["replicas"] == 3
    limits = specs["Worker"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32}
    broken = {**job, "spec": {**job["spec"], "runPolicy": {"backoffLimit": "never"}}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)
