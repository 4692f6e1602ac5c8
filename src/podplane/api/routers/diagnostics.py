"""Diagnoses (read-only; viewers may call them): a verdict with findings, the evidence each
rests on and its source, a conclusion, and the next step as a suggested tool call."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field

from podplane.api.auth import ctx_for
from podplane.api.params import ClusterName
from podplane.api.routers.endpoints import EndpointName
from podplane.api.routers.jobs import JobName
from podplane.api.routers.nodes import NodeName
from podplane.api.routers.operations import OpId
from podplane.domain.diagnostics.verdict import Verdict
from podplane.services.context import Ctx
from podplane.services.diagnostics import endpoint as endpoint_svc
from podplane.services.diagnostics import job as job_svc
from podplane.services.diagnostics import node as node_svc
from podplane.services.diagnostics import operation as op_svc

router = APIRouter(tags=["diagnostics"])
Status = Literal["ok", "warn", "fail"]


class EvidenceOut(BaseModel):
    source: str = Field(description="Where it was read, e.g. hyperpod:ListClusterNodes, "
                        "kubernetes:Node labels, kubernetes:Event, operation step.")
    detail: str


class VerdictFindingOut(BaseModel):
    check: str
    status: Status
    detail: str
    fix: str
    evidence: list[EvidenceOut]


class SuggestedCallOut(BaseModel):
    tool: str = Field(description="The MCP tool (REST and CLI do the same).")
    arguments: dict[str, str | bool | int | list[str]]
    cost: str
    mutates: bool = Field(description="True: confirm with the user before calling it.")


class VerdictOut(BaseModel):
    target: str
    status: Status = Field(description="The worst finding's status (ok: no finding).")
    conclusion: str = Field(description="'healthy', or the cause.")
    findings: list[VerdictFindingOut]
    next: SuggestedCallOut | None = Field(description="Suggested, never executed.")
    ladder: list[SuggestedCallOut] = Field(description="Nodes: investigate -> reboot -> "
                                           "replace, each with its cost.")
    since: str | None
    notes: list[str]


def _out(verdict: Verdict) -> VerdictOut:
    return VerdictOut.model_validate(verdict.shape())


@router.get("/clusters/{cluster}/diagnostics/nodes/{node}", response_model=VerdictOut,
            summary="Diagnose a node: is it sick, why, since when, and the next rung")
async def diagnose_node(cluster: ClusterName, node: NodeName,
                        ctx: Annotated[Ctx, Depends(ctx_for(node_svc.diagnose_node))],
                        ) -> VerdictOut:
    return _out(await node_svc.diagnose_node(ctx, cluster, node))


@router.get("/operations/{op_id}/diagnosis", response_model=VerdictOut,
            summary="Diagnose an operation: the failing step, its cause, the retry")
async def diagnose_operation(op_id: OpId,
                             ctx: Annotated[Ctx, Depends(ctx_for(op_svc.diagnose_operation))],
                             ) -> VerdictOut:
    return _out(await op_svc.diagnose_operation(ctx, op_id))


@router.get("/clusters/{cluster}/diagnostics/jobs/{job}", response_model=VerdictOut,
            summary="Diagnose a training job: why it failed or waits, with its pods and nodes")
async def diagnose_job(cluster: ClusterName, job: JobName,
                       ctx: Annotated[Ctx, Depends(ctx_for(job_svc.diagnose_job))],
                       ) -> VerdictOut:
    return _out(await job_svc.diagnose_job(ctx, cluster, job))


@router.get("/clusters/{cluster}/diagnostics/endpoints/{name}", response_model=VerdictOut,
            summary="Diagnose an inference endpoint: why it does not serve, and the fix")
async def diagnose_endpoint(cluster: ClusterName, name: EndpointName,
                            ctx: Annotated[Ctx, Depends(ctx_for(
                                endpoint_svc.diagnose_endpoint))]) -> VerdictOut:
    return _out(await endpoint_svc.diagnose_endpoint(ctx, cluster, name))
