"""The MCP server: tools/list and tools/call over the table, whatever the transport.

The server enforces what the annotations only hint: a tool the caller's role does not allow
is not listed, and a destructive tool needs confirm=true (refused before any REST call,
audited by the mounted face). A call to a tool above the caller's role is sent on as it is:
the control plane's one role check refuses it (403) and writes its one audit row, so mounted
and stdio (`podplane mcp`, a proxy that can write no audit row) are audited alike.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

import mcp.types as types
from jsonschema import Draft202012Validator
from mcp.server import Server, ServerRequestContext

from podplane import __version__
from podplane.domain.effects import Role
from podplane.mcp import results
from podplane.mcp.rest import Caller, Reply, problem
from podplane.mcp.tool import CONFIRM, Tool
from podplane.mcp.tools import BY_NAME, TOOLS

log = logging.getLogger("podplane.mcp")
CallerOf = Callable[[ServerRequestContext[Any, Any]], Awaitable[Caller]]

INSTRUCTIONS = (
    "podplane manages GPU clusters on AWS (EKS + SageMaker HyperPod). Mutating tools return an "
    "operation: call operation_wait with its id until the status is succeeded, failed or "
    "cancelled (each call blocks up to ~50 s). Destructive tools need confirm=true; ask the "
    "user before setting it. Errors carry a stable code and a hint."
)


def visible_tools(role: Role) -> list[Tool]:
    return [t for t in TOOLS if role.allows(t.role)]


def mcp_tool(tool: Tool) -> types.Tool:
    return types.Tool(
        name=tool.name, description=tool.describe(), input_schema=tool.advertised_schema(),
        annotations=types.ToolAnnotations.model_validate(tool.advertised_annotations()),
    )


def build_server(caller_of: CallerOf) -> Server[Any]:
    async def list_tools(
        ctx: ServerRequestContext[Any, Any], _: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        caller = await caller_of(ctx)
        # The list depends on who asks: never let a client share it across tokens.
        return types.ListToolsResult(tools=[mcp_tool(t) for t in visible_tools(caller.role)],
                                     ttl_ms=0, cache_scope="private")

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        caller = await caller_of(ctx)
        try:
            return await call(params.name, dict(params.arguments or {}), caller)
        except Exception:  # an agent gets a classified error, never a traceback
            log.exception("tool %s failed", params.name)
            return results.failure(problem(
                500, "internal_error", "The tool failed unexpectedly; it has been logged.", None))

    return Server("podplane", version=__version__, title="podplane", instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


async def call(name: str, args: dict[str, Any], caller: Caller) -> types.CallToolResult:
    """Refuse what must be refused, then make exactly one REST call."""
    tool = BY_NAME.get(name)
    if tool is None:
        return results.failure(problem(404, "unknown_tool", f"No tool named {name!r}.",
                                       "Call tools/list to see the tools your token may use."))
    refusal = refuse(tool, args, caller.role)
    if refusal and refusal["code"] == "forbidden" and all(k in args for k in tool.path_params):
        # Authority is the control plane's alone: it refuses the call with the action's one
        # role check (made before it reads a body) and writes the one audit row, the face
        # derived from how the token came (mounted: agent; stdio, over HTTP: api).
        refusal = None
    elif refusal:
        if caller.refused is not None:
            flags = {f: args[f] is True for f in ("force", CONFIRM, "dry_run") if f in args}
            await caller.refused(tool.spec.action, f"mcp:{tool.name}", refusal, flags)
        return results.failure(refusal)
    method, path, query, body = request_for(tool, args)
    reply = await caller.send(method, path, query, body)
    return results.success(tool, reply) if reply.ok else results.failure(_as_problem(reply))


def refuse(tool: Tool, args: dict[str, Any], role: Role) -> dict[str, Any] | None:
    if not role.allows(tool.role):
        return problem(
            403, "forbidden",
            f"'{tool.name}' needs the {tool.role.value} role; this token is {role.value}.",
            "Ask an admin for a token with a higher role.")
    if tool.needs_confirmation and args.get(CONFIRM) is not True:
        return problem(428, "confirmation_required",
                       f"'{tool.name}' is destructive and was called without confirm=true.",
                       "Ask the user to confirm, then call again with confirm=true.")
    errors = sorted(Draft202012Validator(tool.input_schema()).iter_errors(args), key=str)
    if errors:
        where = ".".join(str(p) for p in errors[0].absolute_path) or "arguments"
        schema = errors[0].schema
        rule = schema.get("description") if isinstance(schema, dict) else None
        see = f"See the input schema of '{tool.name}' in tools/list."
        # the field's own words say the rule its pattern encodes
        return problem(422, "invalid_input", f"{where}: {errors[0].message}",
                       f"{where}: {rule} {see}" if rule else see)
    return None


def request_for(
    tool: Tool, args: dict[str, Any]
) -> tuple[str, str, dict[str, Any], dict[str, Any] | None]:
    # The tool's declared defaults are what is sent (e.g. operation_wait waits 50 s, not 30).
    # Never confirm by default: only the agent's own confirm=true travels.
    defaults = {k: p.schema["default"] for k, p in tool.params.items()
                if p.schema.get("default") is not None and k != CONFIRM}
    # confirm=true travels on (checked above): the REST route asks for it too.
    values = {**defaults, **{k: v for k, v in args.items() if v is not None}}
    in_path = {k: quote(str(values.pop(k)), safe="") for k in tool.path_params}
    path = tool.path.format(**in_path)
    if tool.method in ("GET", "DELETE"):
        return tool.method, path, values, None
    # Every route that takes confirm reads it from the query string.
    query = {CONFIRM: values.pop(CONFIRM)} if CONFIRM in values else {}
    return tool.method, path, query, values or None


def _as_problem(reply: Reply) -> dict[str, Any]:
    """The REST problem as REST sent it, so the agent sees the same code and hint."""
    out = dict(reply.body) if isinstance(reply.body, dict) else {}
    out.setdefault("status", reply.status)
    out.setdefault("code", f"http_{reply.status}")
    return out
