"""THE table of MCP tools. Everything the MCP face exposes is declared here and only here.

Each row is one REST call. Path parameters come from the path template; the other
parameters go to the query string (GET) or the JSON body (other methods).
"""

from __future__ import annotations

from podplane.mcp.tool import Tool, integer, text
from podplane.services import audit, tokens

NAME = {"pattern": "^[a-z0-9][a-z0-9._-]{0,62}$", "maxLength": 63}

TOOLS: tuple[Tool, ...] = (
    Tool(
        "audit_list", "GET", "/api/v1/audit", audit.list_audit,
        "List audit log entries, newest first: who did what, through which face, with what result.",
        {
            "limit": integer("How many entries (1-1000).", minimum=1, maximum=1000, default=100),
            "before_id": integer("Only entries older than this id (for paging).", minimum=1),
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

BY_NAME: dict[str, Tool] = {t.name: t for t in TOOLS}
