"""MCP rows for warm pools (included by mcp/tools.py): scale a pool and assign its pods to an
endpoint. Creating a pool is REST or CLI (`podplane pool create`); an endpoint on a pool is
invoked with endpoint_invoke like any other."""

from __future__ import annotations

from podplane.domain.effects import DRY_RUN as PLAN_ONLY
from podplane.domain.inference.pool_requests import AssignRequest, PoolName
from podplane.domain.inference.requests import MAX_REPLICAS
from podplane.mcp.tool import CLUSTER, Tool, boolean, fields_of, integer, typed
from podplane.services.inference import pool

POOL = typed(PoolName, "Pool.", required=True)
POOLS = "/api/v1/clusters/{cluster}/pools"

TOOLS: tuple[Tool, ...] = (
    Tool("pool_scale", "PATCH", POOLS + "/{name}", pool.scale_pool,
         "Set a warm pool's pods. Scale-in removes free pods only (409 if it needs an "
         "assigned one).",
         {"cluster": CLUSTER, "name": POOL,
          "replicas": integer("Pods.", required=True, minimum=0, maximum=MAX_REPLICAS),
          "dry_run": boolean(PLAN_ONLY)}),
    Tool("pool_assign", "POST", POOLS + "/{name}/assign", pool.assign,
         "Give an endpoint pods of a warm pool by label; fewer drains the extra ones.",
         {"cluster": CLUSTER, "name": POOL, **fields_of(AssignRequest)}),
)
