"""The contract of issue 31, one case per operation kind: read the target's views (as a
console or agent watching it would), make the request, repeat it while it runs, wait for the
operation to end, then at once read the views on REST and MCP, repeat the request and plan
it again. A view must show what the operation did (never a 404 for what it made, never the
state before it); the repeat must start no second operation."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from mcp.client.client import Client

from tests.groups.conftest import TERMINAL, finish
from tests.mcp.conftest import structured

Check = Callable[[Any], None]


@dataclass(frozen=True)
class View:
    """One view of the target: a REST GET and the MCP tool that reads the same thing."""

    path: str
    tool: str | None  # None: no MCP tool reads it
    args: dict[str, Any]
    check: Check | None  # on the REST body and on the tool's `result`; None: must be gone

    def of(self, op_id: str) -> View:
        """With `{op}` in the path or an argument read as the operation's id (a view of what
        that run found, as of an NCCL test)."""
        args = {k: v.format(op=op_id) if isinstance(v, str) else v for k, v in self.args.items()}
        return View(self.path.format(op=op_id), self.tool, args, self.check)

    @property
    def per_run(self) -> bool:
        return "{op}" in self.path


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    body: dict[str, Any] | None = None
    params: dict[str, str] = field(default_factory=dict)
    key: str | None = None  # sent as Idempotency-Key

    async def send(self, api: httpx.AsyncClient, **params: str) -> httpx.Response:
        headers = {"Idempotency-Key": self.key} if self.key else None
        return await api.request(self.method, self.path, json=self.body, headers=headers,
                                 params={**self.params, **params})


@dataclass(frozen=True)
class Case:
    kind: str
    request: Request
    views: tuple[View, ...]
    # What a repeat after the end may answer besides `200 changed:false`: a create of a
    # named object answers 409 naming what exists (`job_exists`, ...), a delete 404
    # (`not_found`), never 202.
    repeat_conflict: str | None = None
    dry_run: bool = True  # the request takes `dry_run=true` and plans nothing after the end
    role: str = "admin"
    # An action (a reboot) is not a state to reach: the same action again is a new one. Its
    # request carries an Idempotency-Key, and the repeat must answer the same operation.
    replay: bool = False
    label: str = ""  # names a kind's second case (a pool assign that unassigns)
    # Sandbox seconds moved while it runs: a replaced node's on-start deep health check takes
    # an hour (sandbox aws/hyperpod/nodes.py), longer than a test's waits step on their own.
    advance: float = 0.0

    @property
    def name(self) -> str:
        return f"{self.kind}:{self.label}" if self.label else self.kind


@dataclass
class Found:
    """What a case broke, in words (the test prints them all, not only the first)."""

    problems: list[str] = field(default_factory=list)

    def add(self, what: str) -> None:
        self.problems.append(what)


def fields_are(**want: Any) -> Any:
    def check(body: Any) -> None:
        got = {k: body.get(k) for k in want}
        assert got == want, f"expected {want}, got {got}"
    return check


async def read_views(api: httpx.AsyncClient, mcp: Client, views: tuple[View, ...],
                     found: Found | None) -> None:
    """Each view on both faces; with `found`, each must answer 200 and pass its check."""
    for view in views:
        r = await api.get(view.path)
        result = None if view.tool is None else await mcp.call_tool(view.tool, view.args)
        if found is None:
            continue
        if view.check is None:
            _gone(found, view, r, result)
            continue
        if r.status_code != 200:
            found.add(f"GET {view.path}: {r.status_code} {r.text[:200]}")
        else:
            _check(found, f"GET {view.path}", view.check, r.json())
        if result is None:
            continue
        if result.is_error:
            found.add(f"MCP {view.tool}: error {result.content[0].text[:200]}")  # type: ignore[union-attr]
        else:
            _check(found, f"MCP {view.tool}", view.check, structured(result)["result"])


def _gone(found: Found, view: View, r: httpx.Response, result: Any) -> None:
    if r.status_code != 404:
        found.add(f"GET {view.path}: {r.status_code}, expected 404 (deleted)")
    if result is None:
        return
    if not result.is_error or "not_found" not in result.content[0].text:
        found.add(f"MCP {view.tool}: {result.content[0].text[:200]}, expected not_found")


def _check(found: Found, where: str, check: Check, body: Any) -> None:
    try:
        check(body)
    except AssertionError as err:
        found.add(f"{where}: {err} in {json.dumps(body, default=str)[:300]}")


async def operations_of(api: httpx.AsyncClient, kind: str) -> list[str]:
    r = await api.get("/api/v1/operations", params={"kind": kind, "limit": 100})
    assert r.status_code == 200, r.text
    return [op["id"] for op in r.json()["items"]]


async def run_case(api: httpx.AsyncClient, mcp: Client, case: Case,
                   advance: Callable[[float], None] | None = None) -> list[str]:
    found = Found()
    before_views = tuple(v for v in case.views if not v.per_run)
    await read_views(api, mcp, before_views, None)  # a watcher has the views before
    before = await operations_of(api, case.kind)
    r = await case.request.send(api)
    assert r.status_code == 202, r.text
    op = r.json()
    assert op["kind"] == case.kind, op
    again = await case.request.send(api)  # while it runs: the same operation, or busy
    _while_running(found, op, again)
    done = await _finish(api, op, case.advance, advance)
    assert done["status"] == "succeeded", json.dumps(done, indent=1)[:3000]
    await read_views(api, mcp, tuple(v.of(op["id"]) for v in case.views), found)
    repeat = await case.request.send(api)
    _after_end(found, case, repeat, op)
    if case.dry_run:
        plan = await case.request.send(api, dry_run="true")
        _planned_nothing(found, case, plan, op)
    made = [i for i in await operations_of(api, case.kind) if i not in before]
    if made != [op["id"]]:
        found.add(f"operations of {case.kind} started: {made}, expected only {op['id']}")
    return found.problems


async def _finish(api: httpx.AsyncClient, op: dict[str, Any], seconds: float,
                  advance: Callable[[float], None] | None) -> dict[str, Any]:
    """The operation's end; with `seconds`, the sandbox clock is moved a quarter of them at a
    time between waits until it ends (the step may not have reached its cloud call yet)."""
    for _ in range(16):
        if not seconds or advance is None:
            break
        r = await api.get(f"/api/v1/operations/{op['id']}/wait", params={"timeout": 5})
        if r.json()["status"] in TERMINAL:
            return dict(r.json())
        advance(seconds / 4)
    return await finish(api, op)


def _while_running(found: Found, op: dict[str, Any], again: httpx.Response) -> None:
    body = again.json()
    if again.status_code == 202 and body.get("id") == op["id"]:
        return
    if again.status_code == 409 and body.get("code") == "target_busy" and \
            op["id"] in json.dumps(body):
        return
    if again.status_code in (200, 409):  # it ended already: judged as a repeat after the end
        return
    found.add(f"repeat while running: {again.status_code} {again.text[:200]}")


def _did_nothing(found: Found, case: Case, r: httpx.Response, what: str,
                 op: dict[str, Any]) -> None:
    """`200 changed:false`, or the case's own conflict (a named object made already)."""
    body = r.json()
    if r.status_code == 200 and body.get("changed") is False:
        made_by = (body.get("plan") or {}).get("made_by")
        if made_by is not None and made_by != op["id"]:
            found.add(f"{what} after the end names {made_by} as its maker, not {op['id']}")
        return
    if case.repeat_conflict and r.status_code in (404, 409) and \
            body.get("code") == case.repeat_conflict:
        return
    found.add(f"{what} after the end: {r.status_code} {r.text[:300]}")


def _after_end(found: Found, case: Case, r: httpx.Response, op: dict[str, Any]) -> None:
    if not case.replay:
        _did_nothing(found, case, r, "repeat", op)
    elif r.status_code != 202 or r.json().get("id") != op["id"]:
        found.add(f"replay after the end: {r.status_code} {r.text[:300]}, expected {op['id']}")


def _planned_nothing(found: Found, case: Case, r: httpx.Response, op: dict[str, Any]) -> None:
    _did_nothing(found, case, r, "plan", op)

