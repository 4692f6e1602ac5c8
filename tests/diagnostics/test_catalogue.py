"""The MCP catalogue an agent loads on connect stays small: every tool an admin sees (name,
title, description, input schema, annotations, as tools/list sends them) measured in tokens
and printed. tiktoken is not installed here (and needs its encoding files from the network),
so tokens are approximated as characters / 4, the usual rule for English text and JSON."""

from __future__ import annotations

import json

from podplane.domain.effects import Role
from podplane.mcp.server import mcp_tool, visible_tools

BUDGET = 12_000
CHARS_PER_TOKEN = 4
ROOMS = ("operation_", "cluster_", "instance_group_", "node_", "job_", "feature_",
         "diagnose_", "doctor_", "token_", "audit_", "endpoint_", "pool_", "model_", "space_")


def catalogue(role: Role) -> str:
    return json.dumps([mcp_tool(t).model_dump(mode="json", by_alias=True, exclude_none=True)
                       for t in visible_tools(role)], separators=(",", ":"))


def test_the_whole_catalogue_is_under_twelve_thousand_tokens() -> None:
    text = catalogue(Role.ADMIN)
    names = [t.name for t in visible_tools(Role.ADMIN)]
    assert all(any(n.startswith(r) for n in names) for r in ROOMS), names  # every capability
    tokens = len(text) // CHARS_PER_TOKEN
    viewer = len(catalogue(Role.VIEWER)) // CHARS_PER_TOKEN
    print(f"\nMCP catalogue: {len(names)} tools, {len(text)} chars ~ {tokens} tokens (admin); "
          f"~ {viewer} tokens (viewer); budget {BUDGET}")
    assert "diagnose_node" in text and '"readOnlyHint":true' in text
    assert tokens < BUDGET
