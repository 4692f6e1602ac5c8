"""The CLI puts user-typed names into URLs one percent-encoded segment each."""

from __future__ import annotations

import httpx
import pytest
from typer.testing import CliRunner

from podplane.cli import app
from podplane.cli import remote as remote_module
from podplane.cli.remote import api


def test_each_segment_is_encoded_whole() -> None:
    assert api("clusters", "a/b?c#d", "nodes") == "/api/v1/clusters/a%2Fb%3Fc%23d/nodes"
    assert api("operations", "op 1", "steps", "eks", "retry") == (
        "/api/v1/operations/op%201/steps/eks/retry")


def test_a_name_with_a_slash_reaches_the_server_as_one_segment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.raw_path.decode())
        return httpx.Response(404, json={"code": "not_found", "detail": "no such cluster"})

    real_client = httpx.Client

    def client(**kw: object) -> httpx.Client:
        return real_client(transport=httpx.MockTransport(answer), **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(remote_module.httpx, "Client", client)
    result = CliRunner().invoke(app, ["node", "describe", "gpu/../../tokens", "i-0abc1234",
                                      "--token", "pp_x"])
    assert result.exit_code == 1
    assert seen == ["/api/v1/clusters/gpu%2F..%2F..%2Ftokens/nodes/i-0abc1234"]
