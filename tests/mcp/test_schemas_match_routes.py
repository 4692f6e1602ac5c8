"""Every MCP tool argument is the REST route's own parameter or body field, with the same rules.

A tool may be stricter for agents (a field required, an extra bound), never looser: each rule
the route declares must be in the tool's schema with the same value.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from podplane.bootstrap import build_app
from podplane.mcp.tool import CONFIRM, Tool
from podplane.mcp.tools import TOOLS
from tests.conftest import fresh_settings

RULES = ("type", "pattern", "minLength", "maxLength", "minimum", "maximum", "enum",
         "maxItems", "const", "additionalProperties")


def _shape(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "{}", path)


def _resolve(schema: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return _resolve({**doc["components"]["schemas"][name],
                         **{k: v for k, v in schema.items() if k != "$ref"}}, doc)
    return schema


def _rules(schema: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any]:
    """The rules of one value; `X | None` reads as X (null is only "not given")."""
    schema = _resolve(schema, doc)
    options = [s for s in schema.get("anyOf", []) if s.get("type") != "null"]
    if len(options) == 1:
        schema = {**_resolve(options[0], doc), **{k: v for k, v in schema.items()
                                                  if k != "anyOf"}}
    out = {k: schema[k] for k in RULES if k in schema}
    if "items" in schema:
        out["items"] = _rules(schema["items"], doc)
    return out


def _operation(doc: dict[str, Any], tool: Tool) -> tuple[str, dict[str, Any]]:
    matches = [(path, ops[tool.method.lower()]) for path, ops in doc["paths"].items()
               if _shape(path) == _shape(tool.path) and tool.method.lower() in ops]
    assert len(matches) == 1, (tool.name, tool.path)
    return matches[0]


def _route_fields(doc: dict[str, Any], tool: Tool) -> dict[str, tuple[dict[str, Any], bool]]:
    """The route's inputs by the name the tool uses: path parameters by position, then
    query parameters and body fields by name."""
    path, op = _operation(doc, tool)
    params = [p for p in op.get("parameters", []) if p["in"] in ("path", "query")]
    route_path_names = re.findall(r"\{([^}]+)\}", path)
    out: dict[str, tuple[dict[str, Any], bool]] = {}
    for p in params:
        name = p["name"]
        if p["in"] == "path":
            name = tool.path_params[route_path_names.index(p["name"])]
        out[name] = (p["schema"], p.get("required", False))
    body = op.get("requestBody", {}).get("content", {}).get("application/json", {})
    if body:
        schema = _resolve(body["schema"], doc)
        options = [_resolve(s, doc) for s in schema.get("anyOf", [schema])
                   if s.get("type") != "null"]
        for prop_schema in options:
            required = set(prop_schema.get("required", []))
            for name, prop in prop_schema.get("properties", {}).items():
                out.setdefault(name, (prop, name in required))
    return out


@pytest.fixture(scope="module")
def doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The app's OpenAPI document, built once: its routes are included when the app is built
    (nothing the lifespan starts changes them), and every test here only reads it."""
    return build_app(fresh_settings(tmp_path_factory.mktemp("doc"))).openapi()


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_tool_arguments_are_the_routes_inputs_with_the_same_rules(tool: Tool,
                                                                 doc: dict[str, Any]) -> None:
    route = _route_fields(doc, tool)
    schema = tool.input_schema()
    required = set(schema["required"])
    for name, prop in schema["properties"].items():
        if name == CONFIRM:
            continue
        assert name in route, f"{tool.name}: {name!r} is not an input of {tool.path}"
        route_schema, route_required = route[name]
        want, got = _rules(route_schema, doc), _rules(prop, doc)
        if want.get("type") == "number" and got.get("type") == "integer":
            want["type"] = "integer"  # a whole number of seconds is still a number
        missing = {k: v for k, v in want.items() if got.get(k) != v}
        assert not missing, f"{tool.name}.{name}: route says {missing}, tool says {got}"
        if route_required:
            assert name in required, f"{tool.name}: {name!r} is required by the route"
    for name, (_, route_required) in route.items():
        if route_required:
            assert name in schema["properties"], f"{tool.name} lacks required {name!r}"


def test_the_check_sees_a_disagreement(doc: dict[str, Any]) -> None:
    """The comparison above can fail: a tool whose name rule drifted from its route's."""
    from podplane.mcp.tool import text
    from podplane.services.clusters import service as clusters

    drifted = Tool("cluster_get_status", "GET", "/api/v1/clusters/{name}",
                   clusters.get_cluster, "x",
                   {"name": text("x", required=True, pattern="^[a-z]+$", maxLength=63)})
    with pytest.raises(AssertionError, match="pattern"):
        test_tool_arguments_are_the_routes_inputs_with_the_same_rules(drifted, doc)
