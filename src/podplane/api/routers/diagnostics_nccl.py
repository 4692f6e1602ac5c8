"""The NCCL all-reduce test (operator: it runs a short workload on the chosen nodes): start it
(202, an operation), then read its verdict and figures once the operation ends."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from podplane.api.auth import ctx_for
from podplane.api.params import ClusterName, IdempotencyKey
from podplane.api.routers.diagnostics import VerdictOut
from podplane.api.routers.operations import OperationOut, OpId, Status, out
from podplane.domain.diagnostics.nccl import NcclRequest
from podplane.services.context import Ctx
from podplane.services.diagnostics import nccl as svc

router = APIRouter(tags=["diagnostics"])
BASE = "/clusters/{cluster}/diagnostics/nccl"


class NcclIn(NcclRequest):
    """Run an all-reduce test across these nodes (one GPU instance type, idle, healthy)."""


class NcclPlanOut(BaseModel):
    nodes: list[str]
    instance_type: str
    gpus_per_node: int
    efa_per_node: int
    expected_busbw: float | None = Field(description="GB/s: the type's network bandwidth.")
    pass_busbw: float | None = Field(description="GB/s the test must reach to pass.")
    workload: str
    pairs: int = Field(description="Pair tests a slow result may run (3+ nodes).")


class NcclStartOut(OperationOut):
    changed: bool = True
    plan: NcclPlanOut | dict[str, str]


class NcclRowOut(BaseModel):
    size: int = Field(description="Bytes.")
    time_us: float
    algbw: float = Field(description="GB/s.")
    busbw: float = Field(description="GB/s.")


class NcclMeasuredOut(BaseModel):
    busbw: float | None = Field(description="GB/s at the largest message.")
    avg_busbw: float | None = Field(description="all_reduce_perf's 'Avg bus bandwidth'.")
    network: str | None = Field(description="NCCL's transport, e.g. 'AWS Libfabric' (EFA).")
    rows: list[NcclRowOut]
    job: str


class NcclPairOut(BaseModel):
    nodes: list[str]
    busbw: float | None


class NcclResultOut(BaseModel):
    operation_id: str
    status: Status
    nodes: list[str]
    verdict: VerdictOut | None = Field(description="Once the operation succeeded.")
    measured: NcclMeasuredOut | None
    pairs: list[NcclPairOut]


@router.post(BASE, response_model=None, status_code=202,
             responses={202: {"model": NcclStartOut, "description": "The test's operation."}},
             summary="Run an NCCL all-reduce test across nodes (an operation)")
async def run_nccl(cluster: ClusterName, body: NcclIn,
                   ctx: Annotated[Ctx, Depends(ctx_for(svc.run_nccl))],
                   idempotency_key: IdempotencyKey = None) -> JSONResponse:
    outcome = await svc.run_nccl(ctx, cluster, NcclRequest(nodes=list(body.nodes)),
                                 idempotency_key=idempotency_key)
    assert outcome.operation is not None
    shown: dict[str, Any] = out(outcome.operation).model_dump(mode="json")
    return JSONResponse(jsonable_encoder({**shown, "changed": True, "plan": outcome.plan}),
                        status_code=202)


@router.get(BASE + "/{op_id}", response_model=NcclResultOut,
            summary="An NCCL test's verdict: bus bandwidth against the type's figure")
async def nccl_result(cluster: ClusterName, op_id: OpId,
                      ctx: Annotated[Ctx, Depends(ctx_for(svc.nccl_result))]) -> Any:
    return await svc.nccl_result(ctx, cluster, op_id)
