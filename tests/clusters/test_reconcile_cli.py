"""`podplane cluster reconcile`: asks for the plan first, shows it, and starts nothing on a dry
run or when nothing drifted (the REST answers are the route's own shapes)."""

from __future__ import annotations

import httpx
import pytest
from typer.testing import CliRunner

from podplane.cli import app
from podplane.cli import remote as remote_module

PLAN = {"changed": True, "left_alone": [], "plan": [
    {"unit": "cert-manager", "kind": "eks-addon", "action": "create", "cause": "missing",
     "reason": "cert-manager is missing"}]}


def serve(monkeypatch: pytest.MonkeyPatch, answer: dict[str, object]) -> list[str]:
    seen: list[str] = []

    def reply(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.method} {request.url.raw_path.decode()}")
        return httpx.Response(200, json=answer)

    real_client = httpx.Client

    def client(**kw: object) -> httpx.Client:
        return real_client(transport=httpx.MockTransport(reply), **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(remote_module.httpx, "Client", client)
    return seen


def test_dry_run_shows_the_plan_and_starts_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = serve(monkeypatch, PLAN)
    result = CliRunner().invoke(app, ["cluster", "reconcile", "alpha", "--dry-run",
                                      "--token", "pp_x"])
    assert result.exit_code == 0, result.output
    assert "cert-manager is missing" in result.output and "create" in result.output
    assert seen == ["POST /api/v1/clusters/alpha/reconcile?dry_run=true"]


def test_nothing_drifted_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = serve(monkeypatch, {"changed": False, "plan": [], "left_alone": []})
    result = CliRunner().invoke(app, ["cluster", "reconcile", "alpha", "--yes",
                                      "--token", "pp_x"])
    assert result.exit_code == 0, result.output
    assert "nothing has drifted" in result.output
    assert len(seen) == 1


def test_declining_the_plan_starts_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = serve(monkeypatch, PLAN)
    result = CliRunner().invoke(app, ["cluster", "reconcile", "alpha", "--token", "pp_x"],
                                input="n\n")
    assert result.exit_code == 1
    assert len(seen) == 1
