"""Diagnose an operation: why it failed or what it waits on, from the engine's own record
(steps, their classified errors and history), judged by domain/diagnostics/operation.py.

Read-only (a viewer may run it); the retry it suggests is a tool call it never makes.
"""

from __future__ import annotations

from dataclasses import asdict

from podplane.domain.diagnostics.operation import OperationFacts, diagnose
from podplane.domain.diagnostics.verdict import Verdict
from podplane.domain.effects import Effect
from podplane.services import operations
from podplane.services.access import authority
from podplane.services.context import Ctx
from podplane.services.registry import service


@service(Effect.READ, "diagnose.operation")
async def diagnose_operation(ctx: Ctx, op_id: str) -> Verdict:
    op = await operations.engine_of(ctx.app).read(op_id, history=True)
    destroys = (await authority.of_operation(ctx, op_id, op.kind)).destroys
    steps = tuple(asdict(s) for s in op.steps)
    return diagnose(OperationFacts(op.id, op.kind, op.target, op.status, steps, destroys,
                                   op.cancel_requested))
