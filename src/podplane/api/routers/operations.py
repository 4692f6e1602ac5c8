"""Operations: list, get, long-poll wait, retry a step, cancel, and a WebSocket of changes."""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Response, WebSocket
from pydantic import BaseModel, Field, model_validator
from starlette.websockets import WebSocketDisconnect

from podplane.api.auth import (
    audit_ws_limited,
    audit_ws_refused,
    ctx_for,
    websocket_principal,
)
from podplane.api.derived import fields_of
from podplane.api.params import Confirm
from podplane.domain.errors import NotFound, PodplaneError
from podplane.domain.names import PLAIN_TEXT_PATTERN, REF_PATTERN
from podplane.ops import views
from podplane.services import operations as svc
from podplane.services.access.auth import until_revoked as until_token_revoked
from podplane.services.access.limits import STREAMS, WAITERS, limits_of
from podplane.services.context import Ctx
from podplane.services.registry import admit, effect_of

router = APIRouter(tags=["operations"])
NAME = REF_PATTERN
TEXT = PLAIN_TEXT_PATTERN
OpId = Annotated[str, Path(min_length=1, max_length=40, pattern=NAME)]
StepName = Annotated[str, Path(min_length=1, max_length=64, pattern=NAME)]
Status = Literal["pending", "running", "succeeded", "failed", "cancelled"]


class ErrorOut(BaseModel):
    """A failed step's classified error; on the operation it also names the step.

    An unexpected error never shows its exception text (to anyone, admins included): its
    message names a log id, and the traceback is in the server log under that id."""

    code: str
    message: str
    hint: str | None = None
    step: str | None = None
    log_id: str | None = None

    @model_validator(mode="after")
    def _classified(self) -> ErrorOut:
        if self.code == "internal_error" and self.log_id is None:  # recorded before log ids
            self.message = "The step failed on an unexpected error (see the server log)."
        return self


# The engine's view (ops/views.py) declares every field; the API refines the loose ones.
class StepEventOut(fields_of(views.StepEvent, error=ErrorOut | None)):  # type: ignore[misc]
    pass


class StepOut(fields_of(views.Step, error=ErrorOut | None,  # type: ignore[misc]
                        history=list[StepEventOut] | None)):
    pass


class RequestedByOut(fields_of(views.RequestedBy)):  # type: ignore[misc]
    pass


class OperationOut(fields_of(  # type: ignore[misc]
        views.Operation, status=Status, steps=list[StepOut], requested_by=RequestedByOut,
        error=(ErrorOut | None, Field(description="The failed step's error.")),
        status_url=(str, ...),
        status_tool=(str, Field(description="The MCP tool that decides completion.")))):
    pass


class MadeAlreadyOut(BaseModel):
    """A create repeated after the operation that made its object (issue 31): nothing to do.
    The plan also names the object (`job`, `endpoint`, `pool` or `model`)."""

    note: str
    made_by: str = Field(description="The operation that made it, from this same request.")


class OperationPageOut(BaseModel):
    items: list[OperationOut]
    next_cursor: str | None


def out(op: svc.Operation) -> OperationOut:
    shown: OperationOut = OperationOut.model_validate(op, from_attributes=True)
    return shown


# The JSON of recent list pages, each with the page's items list it was made from. The engine
# keeps a page's list object until an operation changes (ops/notify.py `page`), so the same
# object means the same JSON: a console or agent polling the list costs no serialization
# while nothing happens (issue 21; bench/profile_operations.py prints the CPU per request).
_PAGE_JSON: dict[tuple[Any, ...], tuple[list[svc.Operation], bytes]] = {}
PAGE_JSON_KEPT = 256


def _page_json(key: tuple[Any, ...], page: svc.OperationPage) -> bytes:
    kept = _PAGE_JSON.get(key)
    if kept is not None and kept[0] is page.items:
        return kept[1]
    shown = OperationPageOut(items=[out(op) for op in page.items], next_cursor=page.next_cursor)
    body = shown.model_dump_json().encode()
    if len(_PAGE_JSON) >= PAGE_JSON_KEPT:
        _PAGE_JSON.clear()
    _PAGE_JSON[key] = (page.items, body)
    return body


@router.get("/operations", response_model=OperationPageOut)
async def list_operations(
    ctx: Annotated[Ctx, Depends(ctx_for(svc.list_operations))],
    status: Status | None = None,
    kind: Annotated[str | None, Query(max_length=64, pattern=TEXT)] = None,
    target: Annotated[str | None, Query(max_length=256, pattern=TEXT)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=40, pattern=NAME)] = None,
    history: bool = False,
) -> Response:
    page = await svc.list_operations(ctx, status, kind, target, limit, cursor, history)
    key = (status, kind, target, limit, cursor, history)
    return Response(_page_json(key, page), media_type="application/json")


@router.get("/operations/{op_id}", response_model=OperationOut)
async def get_operation(
    op_id: OpId, ctx: Annotated[Ctx, Depends(ctx_for(svc.get_operation))],
    history: bool = True,
) -> OperationOut:
    return out(await svc.get_operation(ctx, op_id, history))


@router.get("/operations/{op_id}/wait", response_model=OperationOut)
async def wait_operation(
    op_id: OpId, ctx: Annotated[Ctx, Depends(ctx_for(svc.wait_operation))],
    timeout: Annotated[float, Query(ge=0, le=svc.WAIT_CAP_SECONDS)] = 30.0,
    revision: Annotated[int | None, Query(ge=0, le=2**31,
                                          description="Also return once the revision "
                                                      "differs from this one.")] = None,
) -> OperationOut:
    # A long-poll holds a slot of the token's waiter cap until it answers (429 when full).
    with limits_of(ctx.app).holding(WAITERS, ctx.principal.token_id):
        return out(await svc.wait_operation(ctx, op_id, timeout, revision))


@router.post("/operations/{op_id}/steps/{step}/retry", response_model=OperationOut,
             status_code=202)
async def retry_step(
    op_id: OpId, step: StepName, ctx: Annotated[Ctx, Depends(ctx_for(svc.retry_step))],
    confirm: Confirm = False,
) -> OperationOut:
    """Needs the role the operation's start needed (an admin's destroy needs an admin)."""
    return out(await svc.retry_step(ctx, op_id, step, confirm=confirm))


@router.post("/operations/{op_id}/cancel", response_model=OperationOut, status_code=202)
async def cancel_operation(
    op_id: OpId, ctx: Annotated[Ctx, Depends(ctx_for(svc.cancel_operation))],
    confirm: Confirm = False,
) -> OperationOut:
    """Needs the role the operation's start needed."""
    return out(await svc.cancel_operation(ctx, op_id, confirm=confirm))


@router.websocket("/operations/{op_id}/events")
async def operation_events(ws: WebSocket, op_id: str) -> None:
    """Sends the operation JSON now and on every change; closes after a terminal state.
    Auth failures close with 4401 (unauthenticated, also when the token is revoked while
    open) or 4403 (forbidden); 4404 if unknown; 4429 over the token's stream cap or rate."""
    await ws.accept()
    try:
        ctx = Ctx(principal=await websocket_principal(ws), app=app_state_ws(ws))
        ctx = admit(ctx, effect_of(svc.get_operation))  # the action's one role check
        if len(op_id) > 40 or not re.match(NAME, op_id):
            raise NotFound(f"No operation {op_id[:40]!r}.")
        with limits_of(ctx.app).holding(STREAMS, ctx.principal.token_id):
            changes = svc.watch_operation(ctx, op_id)
            first = await anext(changes)
            await ws.send_json(out(first).model_dump(mode="json"))
            await _stream(ws, changes, ctx)
    except PodplaneError as err:
        await audit_ws_limited(ws, err)  # over the stream cap (once: the rate's is marked)
        await audit_ws_refused(ws, err)  # a role check (the handshake's own is marked)
        with contextlib.suppress(RuntimeError):  # already closed
            await ws.close(code=_WS_CLOSE.get(err.status, 4400), reason=err.code)


# Close codes: 4000 + the HTTP status the same refusal has over REST.
_WS_CLOSE = {401: 4401, 403: 4403, 404: 4404, 429: 4429}


async def _stream(ws: WebSocket, changes: Any, ctx: Ctx) -> None:
    async def send_all() -> None:
        async for op in changes:
            await ws.send_json(out(op).model_dump(mode="json"))
        await ws.close(code=1000)

    async def until_gone() -> None:
        with contextlib.suppress(WebSocketDisconnect):
            while (await ws.receive())["type"] != "websocket.disconnect":
                pass

    async def until_revoked() -> None:
        await until_token_revoked(ctx.app, ctx.principal.token_id)
        await ws.close(code=4401, reason="token_revoked")

    tasks = [asyncio.create_task(send_all()), asyncio.create_task(until_gone()),
             asyncio.create_task(until_revoked())]
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(BaseException):
            await task


def app_state_ws(ws: WebSocket) -> Any:
    return ws.app.state.podplane
