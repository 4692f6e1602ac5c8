"""`podplane diagnose ...` rows: each is the REST call of its route, and a verdict prints as a
table with its evidence and the suggested call (exit 1 when a finding fails)."""

from __future__ import annotations

import pytest
import typer

from podplane.cli import diagnose
from podplane.cli.remote import out
from podplane.domain.diagnostics import operation


def test_the_rows_call_the_diagnosis_routes() -> None:
    node, op, job, endpoint, nccl, nccl_result = diagnose.COMMANDS
    assert node.request({"cluster": "gpu", "node": "i-0123456789abcdef0"})[:2] == (
        "GET", "/api/v1/clusters/gpu/diagnostics/nodes/i-0123456789abcdef0")
    assert op.request({"op_id": "op-7"})[:2] == ("GET", "/api/v1/operations/op-7/diagnosis")
    assert job.request({"cluster": "gpu", "job": "train"})[:2] == (
        "GET", "/api/v1/clusters/gpu/diagnostics/jobs/train")
    assert endpoint.request({"cluster": "gpu", "name": "qwen"})[:2] == (
        "GET", "/api/v1/clusters/gpu/diagnostics/endpoints/qwen")
    method, path, kw = nccl.request({"cluster": "gpu", "nodes": "i-1, hyperpod-i-2",
                                     "wait": True})
    assert (method, path, kw) == ("POST", "/api/v1/clusters/gpu/diagnostics/nccl",
                                  {"json": {"nodes": ["i-1", "hyperpod-i-2"]}})
    assert nccl_result.request({"cluster": "gpu", "op_id": "op-7"})[:2] == (
        "GET", "/api/v1/clusters/gpu/diagnostics/nccl/op-7")


def test_a_failed_verdict_shows_cause_evidence_and_the_call_to_confirm() -> None:
    verdict = operation.diagnose(operation.OperationFacts(
        "op-7", "node.reboot", "cluster/gpu/node/i-1", "failed", ({
            "name": "reboot", "status": "failed", "attempt": 1, "error": {
                "code": "access_denied", "message": "User: arn:aws:iam::1:user/u is not "
                "authorized to perform: sagemaker:BatchRebootClusterNodes", "hint": None}},)))
    out.width = 200  # rich sized the console when it was made; read the table whole
    with out.capture() as seen, pytest.raises(typer.Exit) as exited:
        diagnose.show_verdict(verdict.shape(), None)  # type: ignore[arg-type]
    assert exited.value.exit_code == 1
    text = " ".join(seen.get().split())
    assert "sagemaker:BatchRebootClusterNodes" in text and "operation step" in text
    assert "next: operation_retry_step operation_id=op-7 step=reboot" in text
    assert "confirm first" in text
