"""What retrying or cancelling an operation needs: the authority of the request that started it.

An operation carries the role its kind needs and whether it destroys. The start's audit row
records both (`detail.authority`, written by the @service wrapper; a scale-down raises them to
admin + destroys). Kinds started without such a row (the engine's own, a row lost to a crash
between the start and its audit) fall back to `KINDS`, where an unknown scale counts as a
destroy: the fallback never grants less than the start could have needed.
"""

from __future__ import annotations

from dataclasses import dataclass

from podplane.domain.effects import Role
from podplane.domain.errors import ConfirmationRequired
from podplane.services.context import Ctx
from podplane.services.registry import require
from podplane.store import audit_log


@dataclass(frozen=True)
class Authority:
    role: Role
    destroys: bool

    @property
    def rank(self) -> tuple[int, bool]:
        return self.role.rank, self.destroys


OPERATOR = Authority(Role.OPERATOR, False)
ADMIN = Authority(Role.ADMIN, False)
DESTROY = Authority(Role.ADMIN, True)
# Every kind a face can start (the authorization test walks this table).
KINDS: dict[str, Authority] = {
    "cluster.create": OPERATOR,
    "cluster.import": ADMIN,
    "cluster.delete": DESTROY,
    "instance_group.add": OPERATOR,
    "instance_group.scale": DESTROY,  # only when no start row says it grew the group
    "instance_group.delete": DESTROY,
    "node.reboot": OPERATOR,
    "node.replace": DESTROY,
    "node.delete": DESTROY,
    "cluster.reconcile": OPERATOR,  # repairs only: it never deletes
    "feature.set": DESTROY,  # only when no start row says it terminated no nodes
    "job.submit": OPERATOR,
    "job.cancel": OPERATOR,
    "job.delete": DESTROY,
    "endpoint.create": OPERATOR,
    "endpoint.scale": OPERATOR,  # serving capacity only; the instance group stays
    "endpoint.delete": DESTROY,
    "endpoint.update": OPERATOR,  # the pod template only; a failure rolls back
    "endpoint.autoscale": OPERATOR,  # podplane's ScaledObject of the endpoint only
    "pool.create": OPERATOR,
    "pool.scale": OPERATOR,  # scale-in removes free pods only
    "pool.assign": DESTROY,  # only when no start row says it kept the endpoint (pods > 0)
    "pool.delete": DESTROY,
    "model.download": OPERATOR,  # writes only under the cluster bucket's models/<name>/
    "diagnose.nccl": OPERATOR,  # runs a short workload on the chosen nodes, then deletes it
    "space.create": OPERATOR,
    "space.state": OPERATOR,  # a stop keeps the home volume
    "space.delete": DESTROY,  # only when no start row says it kept the home volume
}


async def of_operation(ctx: Ctx, op_id: str, kind: str) -> Authority:
    async with ctx.app.sessions() as db:
        # Each kind is started by the service of the same name (the authorization test
        # checks it), so the start's row is the `kind` row naming the operation.
        recorded = await audit_log.started(db, op_id, kind)
    granted = [Authority(Role(d["role"]), bool(d["destroys"])) for d in recorded
               if d.get("role") in Role._value2member_map_]
    if granted:
        return max(granted, key=lambda a: a.rank)
    return KINDS.get(kind, OPERATOR)


async def guard(ctx: Ctx, action: str, op_id: str, kind: str, *, confirm: bool) -> Authority:
    """Retry and cancel need the start's role; through MCP a destroy also needs confirm=true,
    exactly as starting it did."""
    authority = await of_operation(ctx, op_id, kind)
    require(ctx, authority.role, action)
    if authority.destroys and ctx.principal.face == "agent" and not confirm:
        raise ConfirmationRequired(
            f"Operation {op_id} destroys resources ({kind}); '{action}' needs confirm=true.",
            hint="Ask the user to confirm, then call again with confirm=true.")
    return authority
