"""MCP rows for diagnoses (included by mcp/tools.py). One REST call each, read-only: each
returns a verdict whose `next` is a suggested tool call to confirm with the user, never made."""

from __future__ import annotations

from podplane.domain.diagnostics.nccl import NcclRequest
from podplane.mcp.tool import CLUSTER, OPERATION_ID, Tool, fields_of
from podplane.mcp.tools_endpoints import NAME
from podplane.mcp.tools_jobs import JOB
from podplane.mcp.tools_nodes import NODE
from podplane.services.diagnostics import endpoint, job, nccl, node, operation

VERDICT = "Verdict: findings, evidence, `next` (propose it, never call it unasked)."

TOOLS: tuple[Tool, ...] = (
    Tool("diagnose_node", "GET", "/api/v1/clusters/{cluster}/diagnostics/nodes/{node}",
         node.diagnose_node,
         "Is a node sick: HyperPod status, health labels, taints, events; ladder "
         "investigate -> reboot -> replace. " + VERDICT,
         {"cluster": CLUSTER, "node": NODE}),
    Tool("diagnose_operation", "GET", "/api/v1/operations/{operation_id}/diagnosis",
         operation.diagnose_operation,
         "Why an operation failed or is stuck: step, error, AWS cause, the retry. " + VERDICT,
         {"operation_id": OPERATION_ID}),
    Tool("diagnose_job", "GET", "/api/v1/clusters/{cluster}/diagnostics/jobs/{job}",
         job.diagnose_job,
         "Why a training job failed, waits or hangs: budget, pulls, OOM, Xid/NCCL log lines, "
         "silent pods, flagged nodes. " + VERDICT,
         {"cluster": CLUSTER, "job": JOB}),
    Tool("diagnose_endpoint", "GET", "/api/v1/clusters/{cluster}/diagnostics/endpoints/{name}",
         endpoint.diagnose_endpoint,
         "Why an inference endpoint does not serve: pulls, crashes, GPUs, readiness, "
         "rollout. " + VERDICT,
         {"cluster": CLUSTER, "name": NAME}),
    Tool("diagnose_nccl", "POST", "/api/v1/clusters/{cluster}/diagnostics/nccl", nccl.run_nccl,
         "NCCL all-reduce on idle GPU nodes (short job, deleted after): busbw vs the type's "
         "figure, slow node. Ask the user first.",
         {"cluster": CLUSTER, **fields_of(NcclRequest)}),
)
