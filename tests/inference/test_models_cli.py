"""`podplane model download|list`: one REST call each; the token comes from $HF_TOKEN into the
body (the API keeps it write-only) and is never printed."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from podplane.cli import app
from podplane.cli import remote as remote_module

LISTED = [{"name": "tiny", "uri": "s3://podplane-b/models/tiny/", "files": 3, "bytes": 4242,
           "complete": True}]
PLAN = {"changed": True, "dry_run": True, "plan": {"model": "tiny", "job": "dl-tiny-1",
                                                   "token_secret": "dl-tiny-1-hf"}}
TOKEN = "hf_CliCanaryCliCanaryCliCanary012345"


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, Any]]:
    seen: list[tuple[str, str, Any]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        seen.append((request.method, request.url.raw_path.decode(), body))
        return httpx.Response(200, json=LISTED if request.method == "GET" else PLAN)

    real_client = httpx.Client

    def client(**kw: object) -> httpx.Client:
        return real_client(transport=httpx.MockTransport(answer), **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(remote_module.httpx, "Client", client)
    return seen


def run(*args: str, env: dict[str, str] | None = None) -> str:
    result = CliRunner().invoke(app, [*args, "--token", "pp_x"],
                                env={"COLUMNS": "200", **(env or {})})
    assert result.exit_code == 0, result.output
    return result.output


def test_download_and_list_are_one_rest_call_each(sent: list[tuple[str, str, Any]]) -> None:
    out = run("model", "download", "alpha", "tiny", "--source", "org/tiny", "--revision",
              "v1.0", "--dry-run", env={"HF_TOKEN": TOKEN})
    assert "dl-tiny-1" in out and TOKEN not in out
    listed = run("model", "list", "alpha")
    assert "tiny" in listed and "4242" in listed
    assert [(m, p) for m, p, _ in sent] == [("POST", "/api/v1/clusters/alpha/models"),
                                            ("GET", "/api/v1/clusters/alpha/models")]
    assert sent[0][2] == {"name": "tiny", "source": "org/tiny", "revision": "v1.0",
                          "hf_token": TOKEN, "dry_run": True}
