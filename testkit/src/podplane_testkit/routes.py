"""POST /api/v1/operations/_test: start the test workflow (only while PODPLANE_TEST_WORKFLOWS=1,
else 404, so unsetting the flag in a running test process turns it off)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field

from podplane.api.auth import ctx_for
from podplane.api.params import IdempotencyKey
from podplane.api.routers.operations import TEXT, OperationOut, out
from podplane.domain.effects import Effect
from podplane.domain.errors import NotFound
from podplane.ops.views import Operation
from podplane.services.context import Ctx
from podplane.services.operations import engine_of
from podplane.services.registry import service
from podplane_testkit import touch

router = APIRouter(tags=["operations"])


class TestOperationIn(BaseModel):
    target: str = Field(min_length=1, max_length=256, pattern=TEXT)
    params: dict[str, Any] = Field(default_factory=dict)


@service(Effect.MUTATE, "operation.test_start", target=lambda target, *_a, **_k: target)
async def start_test_operation(
    ctx: Ctx, target: str, params: dict[str, Any], idempotency_key: str | None = None
) -> Operation:
    if not touch.enabled():
        raise NotFound("Test workflows are disabled.", hint=f"Set {touch.ENV}=1 to enable.")
    return await engine_of(ctx.app).begin(touch.KIND, target, params, key=idempotency_key,
                                          face=ctx.principal.face,
                                          principal=ctx.principal.name)


@router.post("/operations/_test", response_model=OperationOut, status_code=202,
             include_in_schema=False)
async def start_test(
    body: TestOperationIn, ctx: Annotated[Ctx, Depends(ctx_for(start_test_operation))],
    idempotency_key: IdempotencyKey = None,
) -> OperationOut:
    return out(await start_test_operation(ctx, body.target, body.params, idempotency_key))
