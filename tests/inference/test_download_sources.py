"""Downloads from another bucket and from JumpStart, cancel, and the model list's pages, end to
end on the sandbox (what S3 and Kubernetes show, read with boto3 and kubectl).

- Another bucket: the Mountpoint CSI driver's role reads it. Without a grant S3 refuses the
  mount's first listing; the download fails naming the bucket, its Job and volume are gone.
  With a bucket policy naming that role (same account: one allow suffices), the files land.
- JumpStart: the model id resolves, through JumpStart's public manifest and spec, to its
  artifact prefix in jumpstart-cache-prod-<region>; unknown versions and gated models are a
  422 on `source` before anything starts.
- Cancel deletes the Job, its Secret and the source volume; no pod writes afterwards.
- The list reads every page when S3 pages at two keys.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import boto3
import httpx
import pytest
from botocore import UNSIGNED
from botocore.config import Config

from tests.groups.conftest import finish
from tests.inference.conftest import kubectl_json, settle
from tests.inference.test_downloads import CANARY, MODELS, PUBLIC, download, objects
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
THEIRS = "team-models-archive"
JUMPSTART = "jumpstart-cache-prod-us-west-2"
DEEPSEEK = "deepseek-llm-r1-distill-qwen-1-5b"
FILES = {"config.json": b'{"model_type": "llama"}', "model.safetensors": b"\x08" + b"w" * 64,
         "tokenizer.json": b"{}"}


def csi_role(stack: Stack) -> str:
    eks = stack.aws("eks")
    eks_name = eks.list_clusters()["clusters"][0]
    (assoc,) = [a for a in eks.list_pod_identity_associations(clusterName=eks_name)
                ["associations"] if a["serviceAccount"] == "s3-csi-driver-sa"]
    return str(eks.describe_pod_identity_association(
        clusterName=eks_name, associationId=assoc["associationId"])["association"]["roleArn"])


def their_bucket(stack: Stack) -> None:
    s3 = stack.aws("s3")
    s3.create_bucket(Bucket=THEIRS, CreateBucketConfiguration={
        "LocationConstraint": "us-west-2"})
    for name, data in FILES.items():
        s3.put_object(Bucket=THEIRS, Key=f"llm/v1/{name}", Body=data)


def leftovers(stack: Stack, model: str) -> dict[str, list[str]]:
    """What Kubernetes still holds of a model's downloads: Jobs, pods, Secrets, volumes."""
    label = f"podplane.io/model={model}"
    out = {}
    for kind in ("jobs", "pods", "secrets", "pvc", "pv"):
        ns = [] if kind == "pv" else ["-n", "default"]
        found = kubectl_json(stack, "get", kind, *ns, "-l", label)["items"]
        out[kind] = [o["metadata"]["name"] for o in found
                     if not o["metadata"].get("deletionTimestamp")]
    return out


async def test_another_bucket_without_a_grant_fails_naming_it(
        cluster: tuple[Stack, str]) -> None:
    stack, _ = cluster
    their_bucket(stack)
    done = await download(stack, "failed", name="theirs-denied",
                          source=f"s3://{THEIRS}/llm/v1/")
    error = next(s["error"] for s in done["steps"] if s["name"] == "wait")
    assert error["code"] == "model_source_denied", error
    assert f"s3://{THEIRS}/" in error["message"] and "AccessDenied" in error["message"]
    assert "s3-csi-driver-sa" in error["hint"]
    settle(stack, 60)
    assert leftovers(stack, "theirs-denied") == {k: [] for k in
                                                 ("jobs", "pods", "secrets", "pvc", "pv")}
    assert objects(stack, "models/theirs-denied/") == {}


async def test_another_bucket_whose_policy_names_the_role_is_copied(
        cluster: tuple[Stack, str]) -> None:
    stack, _ = cluster
    role, arn = csi_role(stack), f"arn:aws:s3:::{THEIRS}"
    stack.aws("s3").put_bucket_policy(Bucket=THEIRS, Policy=json.dumps({
        "Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Principal": {"AWS": role}, "Action": "s3:ListBucket",
             "Resource": arn},
            {"Effect": "Allow", "Principal": {"AWS": role}, "Action": "s3:GetObject",
             "Resource": f"{arn}/llm/*"}]}))
    done = await download(stack, "succeeded", name="theirs", source=f"s3://{THEIRS}/llm/v1/")
    assert objects(stack, "models/theirs/") == FILES
    assert done["result"]["files"] == 3
    settle(stack)
    # The cleanup step removed the source volume; the Job stays for its logs.
    left = leftovers(stack, "theirs")
    assert (left["pvc"], left["pv"], len(left["jobs"])) == ([], [], 1)


async def test_a_jumpstart_model_is_copied_from_its_artifact_prefix(
        cluster: tuple[Stack, str]) -> None:
    stack, _ = cluster
    async with stack.client("operator") as api:
        plan = (await api.post(MODELS, params={"dry_run": "true"}, json={
            "name": "deepseek", "source": f"jumpstart:{DEEPSEEK}@2.0.4"})).json()["plan"]
    assert plan["reads"].startswith(f"s3://{JUMPSTART}/") and DEEPSEEK in plan["reads"]
    volume = next(v for v in plan["manifest"]["spec"]["template"]["spec"]["volumes"]
                  if v["name"] == "source")
    assert volume["persistentVolumeClaim"]["readOnly"] is True
    done = await download(stack, "succeeded", name="deepseek",
                          source=f"jumpstart:{DEEPSEEK}@2.0.4")
    # The same bytes as JumpStart's prefix, read back from both buckets with boto3.
    s3 = stack.aws("s3")
    prefix = plan["reads"].removeprefix(f"s3://{JUMPSTART}/")
    theirs = {o["Key"][len(prefix):]: s3.get_object(Bucket=JUMPSTART, Key=o["Key"])["Body"]
              .read() for o in s3.list_objects_v2(Bucket=JUMPSTART, Prefix=prefix)["Contents"]}
    assert objects(stack, "models/deepseek/") == theirs and len(theirs) == 3
    assert done["result"]["uri"].endswith("/models/deepseek/")


@pytest.mark.parametrize("source, words", [
    (f"jumpstart:{DEEPSEEK}@9.9.9", "no version 9.9.9"),
    ("jumpstart:no-such-model", "no model"),
    ("jumpstart:meta-textgeneration-llama-3-1-8b-instruct", "gated"),
    ("fsx:/models/x", "FSx")])
async def test_a_source_jumpstart_cannot_serve_is_a_422_before_anything(
        cluster: tuple[Stack, str], source: str, words: str) -> None:
    stack, _ = cluster
    async with stack.client("operator") as api:
        r = await api.post(MODELS, json={"name": "refused", "source": source})
    assert r.status_code == 422, r.text
    assert r.json()["field"] == "source" and words in r.json()["detail"], r.json()
    assert leftovers(stack, "refused")["jobs"] == []


async def test_the_sandbox_serves_jumpstart_to_anyone_and_no_one_else_unsigned(
        cluster: tuple[Stack, str]) -> None:
    """Unsigned requests: JumpStart's manifest is public; the cluster's bucket is not."""
    stack, _ = cluster
    anonymous = boto3.client("s3", endpoint_url=stack.aws_url, region_name="us-west-2",
                             config=Config(signature_version=UNSIGNED))
    manifest = json.loads(anonymous.get_object(Bucket=JUMPSTART,
                                               Key="models_manifest.json")["Body"].read())
    assert {m["model_id"] for m in manifest} >= {DEEPSEEK}
    bucket = next(b["Name"] for b in stack.aws("s3").list_buckets()["Buckets"]
                  if b["Name"].startswith("podplane-"))
    with pytest.raises(anonymous.exceptions.ClientError) as err:
        anonymous.list_objects_v2(Bucket=bucket, Prefix="models/")
    assert err.value.response["Error"]["Code"] == "AccessDenied"


async def test_cancel_deletes_the_job_and_nothing_writes_afterwards(
        cluster: tuple[Stack, str]) -> None:
    """The engine's clock is held at the wait step's first poll, so the pod is running when
    the cancel arrives; then virtual time passes well beyond the pod's run."""
    stack, _ = cluster
    clock = stack.app.state.podplane.ops_clock
    release = asyncio.Event()

    async def held(seconds: float) -> None:
        await release.wait()

    clock.sleep = held
    try:
        async with stack.client("operator") as api:
            r = await api.post(MODELS, json={"name": "cancelled", "source": PUBLIC,
                                             "hf_token": CANARY})
            assert r.status_code == 202, r.text
            op = await until_waiting(api, r.json()["id"])
            job = op["result"]["job"]
            assert leftovers(stack, "cancelled")["jobs"] == [job]
            assert (await api.post(f"/api/v1/operations/{op['id']}/cancel")).status_code \
                in (200, 202)
            release.set()
            done = await finish(api, op)
    finally:
        del clock.sleep
    assert done["status"] == "cancelled", done
    assert leftovers(stack, "cancelled")["jobs"] == []  # gone at once (kubectl get jobs)
    settle(stack, 600)
    assert leftovers(stack, "cancelled") == {k: [] for k in
                                             ("jobs", "pods", "secrets", "pvc", "pv")}
    assert objects(stack, "models/cancelled/") == {}


async def until_waiting(api: httpx.AsyncClient, op_id: str) -> dict[str, Any]:
    for _ in range(200):
        op = (await api.get(f"/api/v1/operations/{op_id}")).json()
        wait = next(s for s in op["steps"] if s["name"] == "wait")
        if wait["status"] == "running" and wait.get("phase") == "polling":
            return dict(op)
        await asyncio.sleep(0.05)
    raise AssertionError(f"the download never reached its wait step: {op}")


async def test_the_list_reads_every_page(cluster: tuple[Stack, str]) -> None:
    """With S3 answering two keys a page, the list still counts every file of every model."""
    stack, _ = cluster
    r = httpx.post(f"{stack.aws_url}/_sandbox/faults", headers=stack.control_headers,
                   json={"kind": "s3_short_pages", "max_keys": 2})
    r.raise_for_status()
    try:
        bucket = next(b["Name"] for b in stack.aws("s3").list_buckets()["Buckets"]
                      if b["Name"].startswith("podplane-"))
        page = stack.aws("s3").list_objects_v2(Bucket=bucket, Prefix="models/")
        assert page["KeyCount"] == 2 and page["IsTruncated"]  # the sandbox pages
        async with stack.client("viewer") as api:
            listed = {m["name"]: m for m in (await api.get(MODELS)).json()}
    finally:
        httpx.delete(f"{stack.aws_url}/_sandbox/faults/{r.json()['id']}",
                     headers=stack.control_headers).raise_for_status()
    assert {n: (m["files"], m["complete"]) for n, m in listed.items()} == {
        "theirs": (3, True), "deepseek": (3, True)}
