"""Model downloads into the cluster's bucket, end to end on the sandbox: the objects are read
back with boto3; a gated repository refuses an anonymous download with the hub's reason and
accepts a token; the token (a canary) appears nowhere but in its Secret, which goes at the end;
a Job of the download's name that someone else made is refused, not watched."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.groups.conftest import finish
from tests.inference.conftest import kubectl_json, settle
from tests.jobs.conftest import CLUSTER
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
MODELS = f"/api/v1/clusters/{CLUSTER}/models"
PUBLIC, GATED = "sandbox-models/tiny-chat", "sandbox-models/tiny-chat-gated"
CANARY = "hf_CanaryTokenDoNotLeak0123456789abcdef"


def objects(stack: Stack, prefix: str) -> dict[str, bytes]:
    s3 = stack.aws("s3")
    bucket = next(b["Name"] for b in s3.list_buckets()["Buckets"]
                  if b["Name"].startswith("podplane-"))
    listed = s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
    return {o["Key"][len(prefix):]: s3.get_object(Bucket=bucket, Key=o["Key"])["Body"].read()
            for o in listed}


async def download(stack: Stack, expect: str, **body: Any) -> dict[str, Any]:
    async with stack.client("operator") as api:
        r = await api.post(MODELS, json=body)
        assert r.status_code == 202, r.text
        done = await finish(api, r.json())
    assert done["status"] == expect, done
    return done


async def test_a_public_model_lands_in_the_bucket(cluster: tuple[Stack, str]) -> None:
    stack, _ = cluster
    done = await download(stack, "succeeded", name="tiny", source=PUBLIC)
    files = objects(stack, "models/tiny/")
    assert sorted(files) == ["config.json", "model.safetensors", "tokenizer.json"]
    assert json.loads(files["config.json"])["model_type"] == "llama"
    header = int.from_bytes(files["model.safetensors"][:8], "little")  # safetensors layout
    assert "lm_head.weight" in json.loads(files["model.safetensors"][8:8 + header])
    assert done["result"]["files"] == 3
    assert done["result"]["bytes"] == sum(len(v) for v in files.values())
    assert done["result"]["uri"].endswith("/models/tiny/")
    async with stack.client("viewer") as api:
        listed = (await api.get(MODELS)).json()
    assert {m["name"]: (m["files"], m["complete"]) for m in listed}["tiny"] == (3, True)
    # The operation watched the Job it created: Kubernetes shows it Complete with that uid.
    job = kubectl_json(stack, "get", "job", done["result"]["job"], "-n", "default")
    assert job["metadata"]["uid"] == done["result"]["uid"]
    assert job["status"]["succeeded"] == 1


async def test_the_same_name_again_changes_nothing_or_is_refused(
        cluster: tuple[Stack, str]) -> None:
    """The same request again: `changed: false` (issue 31); another source for that name: 409
    before anything starts."""
    stack, _ = cluster
    async with stack.client("operator") as api:
        r = await api.post(MODELS, json={"name": "tiny", "source": PUBLIC})
        assert r.status_code == 200 and r.json()["changed"] is False, r.text
        r = await api.post(MODELS, json={"name": "tiny", "source": GATED})
        assert r.status_code == 409 and r.json()["code"] == "model_exists", r.text
        ops = (await api.get("/api/v1/operations", params={"kind": "model.download"})).json()
    assert len(ops["items"]) == 1, ops  # the first download only


async def test_a_replay_of_its_key_after_the_end_answers_its_operation(
        cluster: tuple[Stack, str]) -> None:
    """The start added facts it derived (the source's bucket and key) to the operation's
    parameters; the replay cannot derive them again (the prefix is full now), yet it is the
    same request: its operation, not `idempotency_key_reused`."""
    stack, _ = cluster
    body, key = {"name": "tiny-keyed", "source": PUBLIC}, {"Idempotency-Key": "dl-keyed-1"}
    async with stack.client("operator") as api:
        r = await api.post(MODELS, json=body, headers=key)
        assert r.status_code == 202, r.text
        assert (await finish(api, r.json()))["status"] == "succeeded"
        again = await api.post(MODELS, json=body, headers=key)
        assert again.status_code == 202 and again.json()["id"] == r.json()["id"], again.text
        other = await api.post(MODELS, json={**body, "source": GATED}, headers=key)
    assert other.status_code == 409 and other.json()["code"] == "idempotency_key_reused"


async def test_a_gated_model_without_token_fails_with_the_hubs_reason(
        cluster: tuple[Stack, str]) -> None:
    stack, _ = cluster
    done = await download(stack, "failed", name="gated-anon", source=GATED)
    error = next(s["error"] for s in done["steps"] if s["name"] == "wait")
    assert error["code"] == "model_download_failed"
    assert "GatedRepoError: 401" in error["message"], error
    assert objects(stack, "models/gated-anon/") == {}


async def test_an_unknown_revision_fails_with_the_hubs_reason(cluster: tuple[Stack, str]) -> None:
    stack, _ = cluster
    done = await download(stack, "failed", name="bad-rev", source=PUBLIC, revision="v9")
    error = next(s["error"] for s in done["steps"] if s["name"] == "wait")
    assert "RevisionNotFoundError: 404" in error["message"], error


@pytest.fixture
def log_file(tmp_path: Path) -> Iterator[Path]:
    """Everything the control plane logs (every logger, DEBUG) into one file."""
    path = tmp_path / "control-plane.log"
    handler = logging.FileHandler(path)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield path
    root.removeHandler(handler)
    root.setLevel(level)
    handler.close()


async def test_with_a_token_it_works_and_the_token_appears_nowhere(
        cluster: tuple[Stack, str], log_file: Path) -> None:
    stack, _ = cluster
    seen: list[str] = []
    async with stack.client("operator") as api:
        plan = await api.post(MODELS, params={"dry_run": "true"},
                              json={"name": "gated", "source": GATED, "hf_token": CANARY})
        seen.append(plan.text)
        r = await api.post(MODELS, json={"name": "gated", "source": GATED, "hf_token": CANARY})
        seen.append(r.text)
        assert r.status_code == 202, r.text
        done = await finish(api, r.json())
        assert done["status"] == "succeeded", done
        for path in (f"/api/v1/operations/{done['id']}", "/api/v1/operations?history=true",
                     "/api/v1/audit", MODELS):
            seen.append((await api.get(path)).text)
    assert sorted(objects(stack, "models/gated/")) == ["config.json", "model.safetensors",
                                                       "tokenizer.json"]
    settle(stack)
    job = done["result"]["job"]
    seen.append(stack.kubectl("get", "jobs,pods", "-n", "default", "-o", "json"))
    pod = kubectl_json(stack, "get", "pods", "-n", "default", "-l", f"job-name={job}")
    seen.append(stack.kubectl("logs", pod["items"][0]["metadata"]["name"], "-n", "default"))
    seen.append(log_file.read_text())
    home = Path(stack.app.state.podplane.settings.database_url.removeprefix("sqlite:///"))
    seen += [p.read_bytes().decode("latin-1") for p in home.parent.glob(home.name + "*")]
    assert not [i for i, text in enumerate(seen) if CANARY in text]
    # The Job names the Secret, never the value; the Secret is gone once the files landed.
    env = {e["name"]: e for e in pod["items"][0]["spec"]["containers"][0]["env"]}
    assert env["HF_TOKEN"]["valueFrom"]["secretKeyRef"]["name"] == f"{job}-hf"
    secrets = kubectl_json(stack, "get", "secrets", "-n", "default")["items"]
    assert not [s for s in secrets if s["metadata"]["name"].startswith("dl-")]


async def test_a_job_of_that_name_made_by_someone_else_is_not_adopted(
        cluster: tuple[Stack, str], tmp_path: Path) -> None:
    """The Job's name follows from the Idempotency-Key; someone creates it first."""
    import hashlib

    stack, _ = cluster
    name = f"dl-squatted-{hashlib.sha256(b'squat-1').hexdigest()[:8]}"
    manifest = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": name, "namespace": "default"}, "spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "x", "image": "busybox"}]}}}}
    (tmp_path / "job.json").write_text(json.dumps(manifest))
    stack.kubectl("apply", "-f", str(tmp_path / "job.json"))
    async with stack.client("operator", **{"Idempotency-Key": "squat-1"}) as api:
        r = await api.post(MODELS, json={"name": "squatted", "source": PUBLIC})
        assert r.status_code == 202, r.text
        done = await finish(api, r.json())
    assert done["status"] == "failed"
    error = next(s["error"] for s in done["steps"] if s["name"] == "job")
    assert error["code"] == "model_job_not_ours", error
    theirs = kubectl_json(stack, "get", "job", name, "-n", "default")
    assert theirs["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox"


async def test_download_then_deploy_self_managed_from_mcp_in_eight_calls(
        cluster: tuple[Stack, str]) -> None:
    """model_download, operation_wait, endpoint_create (the download's s3:// uri, a load
    balancer), operation_wait, endpoint_invoke, endpoint_scale, operation_wait."""
    from tests.jobs.test_mcp_recipes import Counted
    from tests.mcp.conftest import mcp_client

    stack, group = cluster
    async with mcp_client(stack.app, stack.tokens["operator"]) as client:
        agent = Counted(client)
        started = await agent("model_download", cluster=CLUSTER, name="agent-model",
                              source=PUBLIC)
        assert started["next"]["tool"] == "operation_wait"
        done = (await agent("operation_wait", operation_id=started["result"]["id"]))["result"]
        assert done["status"] == "succeeded", done
        uri = done["result"]["uri"]
        created = await agent("endpoint_create", cluster=CLUSTER, name="agent-s3",
                              instance_group=group, model=uri, exposure="load_balancer")
        waited = await agent("operation_wait", operation_id=created["result"]["id"])
        assert waited["result"]["status"] == "succeeded", waited
        answer = (await agent("endpoint_invoke", cluster=CLUSTER, name="agent-s3",
                              prompt="Hello", max_tokens=4))["result"]
        assert answer["response"]["usage"]["completion_tokens"] == 4
        scaled = await agent("endpoint_scale", cluster=CLUSTER, name="agent-s3", replicas=2)
        waited = await agent("operation_wait", operation_id=scaled["result"]["id"])
        assert waited["result"]["status"] == "succeeded", waited
        assert agent.calls <= 8, agent.calls
    settle(stack)
    dep = kubectl_json(stack, "get", "deployment", "agent-s3", "-n", "default")
    args = " ".join(dep["spec"]["template"]["spec"]["containers"][0].get("args") or [])
    assert uri.rstrip("/") in args and "runai_streamer" in args, args
    assert dep["status"]["readyReplicas"] == 2
    svc = kubectl_json(stack, "get", "service", "agent-s3", "-n", "default")
    assert svc["spec"]["type"] == "LoadBalancer"
    assert svc["status"]["loadBalancer"]["ingress"][0]["hostname"]
