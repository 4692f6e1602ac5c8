"""The download's Job steps alone, against a small in-memory API server: the wait watches the
Job by the uid the job step recorded, so a Job of the same name recreated by someone else is
refused, not watched to completion; a failed Job reports the pod's reason and its last log
lines, scrubbed of anything shaped like a token, and the token's Secret goes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from podplane.domain.errors import CloudError
from podplane.services.inference.download_steps import DownloadSteps
from tests.fakes.step import FakeStep

PARAMS = {"job": "dl-tiny-0123abcd", "secret": "dl-tiny-0123abcd-hf", "id": "0123abcd",
          "download": {"name": "tiny", "source": "org/tiny", "revision": None, "token": True},
          "source_key": None, "bucket": "podplane-b"}


class Step(FakeStep):
    async def remember(self, **checkpoint: Any) -> None:
        self.checkpoint.update(checkpoint)


class Server:
    """One Job, whose uid and status the test sets; pods and logs for a failed one."""

    def __init__(self) -> None:
        self.job: dict[str, Any] | None = None
        self.deleted: list[str] = []
        self.uids = iter(f"uid-{i}" for i in range(10))

    async def get(self, api_version: str, kind: str, name: str, ns: str) -> Any:
        return self.job if kind == "Job" else {"metadata": {"name": name}}

    async def apply(self, manifest: dict[str, Any], **_: Any) -> dict[str, Any]:
        self.job = {**manifest, "metadata": {**manifest["metadata"], "uid": next(self.uids)}}
        return self.job

    async def patch(self, *_a: Any, **_k: Any) -> dict[str, Any]:
        return {}

    async def delete(self, api_version: str, kind: str, name: str, **_: Any) -> None:
        self.deleted.append(f"{kind}/{name}")

    async def list(self, *_a: Any, **_k: Any) -> list[dict[str, Any]]:
        return [{"metadata": {"name": "dl-tiny-0123abcd-x1"}, "status": {"containerStatuses": [
            {"name": "download", "state": {"terminated": {"reason": "Error", "exitCode": 1}}}]}}]

    async def logs(self, *_a: Any, **_k: Any) -> Any:
        for line in ("Fetching 3 files\n", "401 Client Error for token hf_abcdefghijklmnop\n"):
            yield line


def _steps(server: Server) -> DownloadSteps:
    steps = DownloadSteps(None)  # type: ignore[arg-type]

    async def kube(_ctx: Any) -> Server:
        return server

    steps.kube = kube  # type: ignore[method-assign]
    return steps


def _finish(server: Server, kind: str) -> None:
    assert server.job is not None
    server.job["status"] = {"conditions": [{"type": kind, "status": "True"}]}


def test_a_job_recreated_under_the_same_name_is_not_watched() -> None:
    server, ctx = Server(), Step(dict(PARAMS))
    steps = _steps(server)
    ctx.results.update(asyncio.run(steps.job(ctx)))
    assert ctx.results["uid"] == "uid-0"
    server.job = {**server.job, "metadata": {**server.job["metadata"], "uid": "uid-other"}}
    _finish(server, "Complete")  # theirs completes: still not ours
    with pytest.raises(CloudError) as err:
        asyncio.run(steps.wait(ctx))
    assert err.value.code == "model_job_replaced"
    assert "uid-other" in err.value.message and "uid-0" in err.value.message


def test_the_recorded_job_is_watched_to_completion() -> None:
    server, ctx = Server(), Step(dict(PARAMS))
    steps = _steps(server)
    ctx.results.update(asyncio.run(steps.job(ctx)))
    _finish(server, "Complete")
    assert asyncio.run(steps.wait(ctx))["status"] == "Complete"


def test_a_failed_job_says_why_without_the_token_and_drops_the_secret() -> None:
    server, ctx = Server(), Step(dict(PARAMS))
    steps = _steps(server)
    ctx.results.update(asyncio.run(steps.job(ctx)))
    _finish(server, "Failed")
    with pytest.raises(CloudError) as err:
        asyncio.run(steps.wait(ctx))
    message = err.value.message
    assert "container download Error (exit 1)" in message and "401 Client Error" in message
    assert "hf_abcdefghijklmnop" not in message and "hf_***" in message
    assert server.deleted == ["Secret/dl-tiny-0123abcd-hf"]


def test_a_resumed_job_step_refuses_a_job_replaced_since_it_recorded_the_uid() -> None:
    server, ctx = Server(), Step(dict(PARAMS))
    steps = _steps(server)
    asyncio.run(steps.job(ctx))
    assert server.job is not None
    server.job["metadata"]["uid"] = "uid-other"
    with pytest.raises(CloudError) as err:
        asyncio.run(steps.job(ctx))  # the checkpoint kept uid-0
    assert err.value.code == "model_job_replaced"
