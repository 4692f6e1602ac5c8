"""THE table of MCP tools. Everything the MCP face exposes is declared here and only here.

Each row is one REST call. Path parameters come from the path template; the other
parameters go to the query string (GET) or the JSON body (other methods).
"""

from __future__ import annotations

from podplane.domain.names import PLAIN_TEXT_PATTERN, REF_PATTERN, TOKEN_NAME_PATTERN
from podplane.mcp import (
    tools_clusters,
    tools_diagnostics,
    tools_endpoints,
    tools_features,
    tools_jobs,
    tools_models,
    tools_nodes,
    tools_pools,
    tools_spaces,
)
from podplane.mcp.tool import NEXT_CURSOR, OPERATION_ID, Tool, boolean, integer, text
from podplane.services import operations
from podplane.services.access import audit, tokens

NAME = {"pattern": TOKEN_NAME_PATTERN, "minLength": 1, "maxLength": 63}
DESTROY_CONFIRM = boolean("True if the operation destroys (a delete, a scale-down), once "
                          "the user agreed.")
STATUSES = ["pending", "running", "succeeded", "failed", "cancelled"]

TOOLS: tuple[Tool, ...] = (
    Tool(
        "operation_list", "GET", "/api/v1/operations", operations.list_operations,
        "List operations (durable mutations), newest first.",
        {
            "status": text("Only this status.", enum=STATUSES),
            "kind": text("Only this kind, e.g. 'cluster.create'.", maxLength=64,
                         pattern=PLAIN_TEXT_PATTERN),
            "target": text("Only this target, e.g. 'cluster/demo'.", maxLength=256,
                           pattern=PLAIN_TEXT_PATTERN),
            "limit": integer("Per page.", minimum=1, maximum=200, default=50),
            "cursor": text(NEXT_CURSOR, maxLength=40,
                           pattern=REF_PATTERN),
        },
    ),
    Tool(
        "operation_get", "GET", "/api/v1/operations/{operation_id}", operations.get_operation,
        "One operation now: status; each step's status, phase, attempts, error.",
        {"operation_id": OPERATION_ID,
         "history": boolean("With each step's events.", default=False)},
    ),
    Tool(
        "operation_wait", "GET", "/api/v1/operations/{operation_id}/wait",
        operations.wait_operation,
        "Wait until an operation finishes, changes after `revision`, or `timeout` seconds "
        "pass. Returns it, its progress and what to call next: only this says a mutation is "
        "done.",
        {"operation_id": OPERATION_ID,
         "timeout": integer("Seconds.", minimum=0, maximum=50, default=50),
         "revision": integer("The revision you last saw.", minimum=0, maximum=2**31)},
    ),
    Tool(
        "operation_retry_step", "POST", "/api/v1/operations/{operation_id}/steps/{step}/retry",
        operations.retry_step,
        "Re-run a failed or cancelled operation from one step, once the cause is fixed; "
        "earlier steps are not repeated.",
        {"operation_id": OPERATION_ID,
         "step": text("A step of the operation.", required=True,
                      pattern=REF_PATTERN, minLength=1, maxLength=64),
         "confirm": DESTROY_CONFIRM},
    ),
    Tool(
        "operation_cancel", "POST", "/api/v1/operations/{operation_id}/cancel",
        operations.cancel_operation,
        "Stop a running operation after its current step; cloud resources it created stay "
        "(then retry or clean up).",
        {"operation_id": OPERATION_ID, "confirm": DESTROY_CONFIRM},
    ),
    Tool(
        "audit_list", "GET", "/api/v1/audit", audit.list_audit,
        "Audit log, newest first: who did what, through which face, with what result.",
        {
            "limit": integer("Per page.", minimum=1, maximum=1000, default=100),
            "before_id": integer("Only entries older than this id (paging).", minimum=1,
                                 maximum=2**62),
            "principal": text("Only this token's entries.", maxLength=64),
            "action": text("Only this action, e.g. 'token.revoke'.", maxLength=64),
        },
    ),
    Tool(
        "token_list", "GET", "/api/v1/tokens", tokens.list_tokens,
        "List API tokens: role and last use (never secrets).",
    ),
    Tool(
        "token_revoke", "DELETE", "/api/v1/tokens/{name}", tokens.revoke_token,
        "Revoke an API token: its holder loses access at once. No operation to wait for.",
        {"name": text("Token.", required=True, **NAME)},
        returns_operation=False,
    ),
)

TOOLS = (TOOLS + tools_clusters.TOOLS + tools_nodes.TOOLS + tools_jobs.TOOLS
         + tools_features.TOOLS + tools_diagnostics.TOOLS + tools_endpoints.TOOLS
         + tools_pools.TOOLS + tools_models.TOOLS + tools_spaces.TOOLS)
BY_NAME: dict[str, Tool] = {t.name: t for t in TOOLS}
