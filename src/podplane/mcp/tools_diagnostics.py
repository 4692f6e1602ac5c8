"""MCP rows for diagnoses (included by mcp/tools.py). One REST call each, read-only: each
returns a verdict whose `next` is a suggested tool call to confirm with the user, never made."""

from __future__ import annotations

from podplane.domain.names import REF_PATTERN
from podplane.mcp.tool import Tool, text
from podplane.mcp.tools_jobs import JOB
from podplane.mcp.tools_nodes import CLUSTER, NODE
from podplane.services.diagnostics import job, node, operation

VERDICT = ("Returns findings (status, evidence with its source), a conclusion ('healthy' or "
           "the cause) and `next`: a tool call with its arguments and cost, to propose, not "
           "to make unasked.")

TOOLS: tuple[Tool, ...] = (
    Tool("diagnose_node", "GET", "/api/v1/clusters/{cluster}/diagnostics/nodes/{node}",
         node.diagnose_node,
         "Diagnose a node: HyperPod status, health labels, taints, conditions and Kubernetes "
         "events; the ladder investigate -> reboot (keeps instance storage) -> replace "
         "(loses it). " + VERDICT, {"cluster": CLUSTER, "node": NODE}),
    Tool("diagnose_operation", "GET", "/api/v1/operations/{operation_id}/diagnosis",
         operation.diagnose_operation,
         "Diagnose a failed or stuck operation: the failing step, its error, the AWS-side "
         "cause (capacity, quota, IAM) and the exact retry. " + VERDICT,
         {"operation_id": text("The operation's id (op-...).", required=True,
                               pattern=REF_PATTERN, minLength=1, maxLength=40)}),
    Tool("diagnose_job", "GET", "/api/v1/clusters/{cluster}/diagnostics/jobs/{job}",
         job.diagnose_job,
         "Diagnose a training job: failed condition and restart budget, image pulls, "
         "OOMKilled, exit codes, scheduling, and flagged nodes. " + VERDICT,
         {"cluster": CLUSTER, "job": JOB}),
)
