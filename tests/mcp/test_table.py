"""The tool table is the single source: names, paths, schemas and hints are derived and coherent."""

from __future__ import annotations

import re

import pytest
from fastapi.routing import APIRoute, iter_route_contexts
from jsonschema import Draft202012Validator

from podplane.bootstrap import build_app
from podplane.domain.effects import Effect, mcp_hints
from podplane.mcp.tool import CONFIRM, Tool
from podplane.mcp.tools import BY_NAME, TOOLS
from podplane.services.registry import REGISTRY, ServiceSpec, effect_of
from tests.conftest import fresh_settings

NOUN_VERB = re.compile(r"^[a-z]+(_[a-z]+)+$")


def test_names_are_unique_noun_verb() -> None:
    names = [t.name for t in TOOLS]
    assert len(names) == len(set(names)) == len(BY_NAME)
    assert all(NOUN_VERB.match(n) for n in names), names


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_each_row_is_one_declared_service_call(tool: Tool) -> None:
    spec = effect_of(tool.service)
    assert REGISTRY[spec.action] is spec  # a real @service function, not a look-alike
    assert tool.method in {"GET", "POST", "PATCH", "PUT", "DELETE"}
    assert tool.path.startswith("/api/v1/")
    assert set(tool.path_params) <= set(tool.params), "every path part is a declared parameter"
    assert all(tool.params[p].required for p in tool.path_params)
    Draft202012Validator.check_schema(tool.input_schema())


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_annotations_derive_from_the_service_effect(tool: Tool) -> None:
    effect = effect_of(tool.service).effect
    hints = tool.annotations()
    assert {k: hints[k] for k in mcp_hints(effect)} == mcp_hints(effect)
    assert hints["readOnlyHint"] is (effect is Effect.READ)
    assert hints["destructiveHint"] is (effect is Effect.DESTROY)
    needs_confirm = CONFIRM in tool.input_schema()["required"]
    assert needs_confirm is (effect is Effect.DESTROY)


def test_mutating_tools_point_at_operation_wait() -> None:
    for tool in TOOLS:
        says_wait = "operation_wait" in tool.describe()
        assert says_wait is (tool.effect.mutates and tool.returns_operation), tool.name


def _shape(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "{}", path)


def _route_specs(app, method: str, path: str) -> list[ServiceSpec]:  # type: ignore[no-untyped-def]
    """The ServiceSpecs the REST route's auth dependency (ctx_for) closes over."""
    routes = [c.original_route for c in iter_route_contexts(app.routes)
              if isinstance(c.original_route, APIRoute) and method in c.original_route.methods
              and _shape(c.path or "") == _shape(path)]
    assert len(routes) == 1, (method, path)
    cells = [c.cell_contents for d in routes[0].dependant.dependencies
             for c in (getattr(d.call, "__closure__", None) or ())]
    return [c for c in cells if isinstance(c, ServiceSpec)]


@pytest.fixture(scope="module")
def routed(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The app, built once: its routes and their auth dependencies exist from build_app on
    (the lifespan starts the engine, which no route's declaration depends on)."""
    return build_app(fresh_settings(tmp_path_factory.mktemp("routed")))


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_the_route_enforces_the_same_service_the_tool_declares(routed, tool: Tool) -> None:  # type: ignore[no-untyped-def]
    specs = _route_specs(routed, tool.method, tool.path)
    # one service per route, or (PATCH an endpoint: scale or update by its body) one of the
    # route's services, all needing the same role
    assert effect_of(tool.service) in specs and len({s.role for s in specs}) == 1, specs
