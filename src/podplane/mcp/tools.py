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
from podplane.mcp.tool import Tool, boolean, integer, text
from podplane.services import operations
from podplane.services.access import audit, tokens

NAME = {"pattern": TOKEN_NAME_PATTERN, "minLength": 1, "maxLength": 63}
OPERATION_ID = text("The operation's id (op-...).", required=True, pattern=REF_PATTERN,
                    minLength=1, maxLength=40)
DESTROY_CONFIRM = boolean("Required (true) when the operation destroys (a delete, a "
                          "scale-down): ask the user first, as for starting it.")
STATUSES = ["pending", "running", "succeeded", "failed", "cancelled"]

TOOLS: tuple[Tool, ...] = (
    Tool(
        "operation_list", "GET", "/api/v1/operations", operations.list_operations,
        "List operations (durable mutations), newest first; filter by status, kind or target.",
        {
            "status": text("Only operations in this status.", enum=STATUSES),
            "kind": text("Only this kind, e.g. 'cluster.create'.", maxLength=64,
                         pattern=PLAIN_TEXT_PATTERN),
            "target": text("Only operations on this target.", maxLength=256,
                           pattern=PLAIN_TEXT_PATTERN),
            "limit": integer("How many (1-200).", minimum=1, maximum=200, default=50),
            "cursor": text("next_cursor from the previous page.", maxLength=40,
                           pattern=REF_PATTERN),
        },
    ),
    Tool(
        "operation_get", "GET", "/api/v1/operations/{operation_id}", operations.get_operation,
        "Get one operation now: status, and each step's status, phase, attempts and error.",
        {"operation_id": OPERATION_ID,
         "history": boolean("Include each step's event history.", default=False)},
    ),
    Tool(
        "operation_wait", "GET", "/api/v1/operations/{operation_id}/wait",
        operations.wait_operation,
        "Wait for an operation, at most `timeout` seconds (<= 50) per call: returns when it "
        "finishes, when it changes after `revision`, or at the timeout. Returns the operation, "
        "a progress summary and what to call next. This tool decides when a mutation is done.",
        {"operation_id": OPERATION_ID,
         "timeout": integer("Seconds to wait (0-50).", minimum=0, maximum=50, default=50),
         "revision": integer("Also return as soon as the operation's revision differs "
                             "from this one (pass the revision you last saw).", minimum=0,
                             maximum=2**31)},
    ),
    Tool(
        "operation_retry_step", "POST", "/api/v1/operations/{operation_id}/steps/{step}/retry",
        operations.retry_step,
        "Re-run one step of a failed or cancelled operation (after fixing the cause), then "
        "the steps after it. Completed earlier steps are not repeated.",
        {"operation_id": OPERATION_ID,
         "step": text("The step's name, as in the operation's steps.", required=True,
                      pattern=REF_PATTERN, minLength=1, maxLength=64),
         "confirm": DESTROY_CONFIRM},
    ),
    Tool(
        "operation_cancel", "POST", "/api/v1/operations/{operation_id}/cancel",
        operations.cancel_operation,
        "Ask a running operation to stop after its current step; cloud resources already "
        "created stay (inspect them, then retry or clean up).",
        {"operation_id": OPERATION_ID, "confirm": DESTROY_CONFIRM},
    ),
    Tool(
        "audit_list", "GET", "/api/v1/audit", audit.list_audit,
        "List audit log entries, newest first: who did what, through which face, with what result.",
        {
            "limit": integer("How many entries (1-1000).", minimum=1, maximum=1000, default=100),
            "before_id": integer("Only entries older than this id (for paging).", minimum=1,
                                 maximum=2**62),
            "principal": text("Only entries by this token name.", maxLength=64),
            "action": text("Only this action, e.g. 'token.revoke'.", maxLength=64),
        },
    ),
    Tool(
        "token_list", "GET", "/api/v1/tokens", tokens.list_tokens,
        "List API tokens with their role and last use (never their secrets). Admin only.",
    ),
    Tool(
        "token_revoke", "DELETE", "/api/v1/tokens/{name}", tokens.revoke_token,
        "Revoke an API token by name; its holder loses access at once. Completes within the call.",
        {"name": text("The token's name.", required=True, **NAME)},
        returns_operation=False,
    ),
)

TOOLS = (TOOLS + tools_clusters.TOOLS + tools_nodes.TOOLS + tools_jobs.TOOLS
         + tools_features.TOOLS + tools_diagnostics.TOOLS + tools_endpoints.TOOLS
         + tools_pools.TOOLS + tools_models.TOOLS + tools_spaces.TOOLS)
BY_NAME: dict[str, Tool] = {t.name: t for t in TOOLS}
