"""Model downloads into the cluster's bucket (`models/<name>/`) and what is there.

A download is an operation (services/inference/download_steps.py). The Hugging Face token is
written to a Kubernetes Secret here, before the operation is recorded, so the operation, its
plan and its audit row never carry it; a request refused later deletes that Secret again."""

from __future__ import annotations

import contextlib
import hashlib
import secrets
from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.effects import Effect
from podplane.domain.errors import CloudError, Conflict, NotFound
from podplane.domain.inference import download_sources as ds
from podplane.domain.inference import downloads as dl
from podplane.domain.jobs.kinds import NAMESPACE
from podplane.domain.manifests.storage import CLAIM
from podplane.services.cloud_access import cloud_of
from podplane.services.context import Ctx
from podplane.services.inference import download_sources
from podplane.services.inference.download_steps import DOWNLOAD
from podplane.services.mutation import Outcome, key_used, replay, start, unchanged_or
from podplane.services.registry import service
from podplane.services.scope import bucket_of, kube_of

Shape = dict[str, Any]


class ModelExists(Conflict):
    code = "model_exists"


def target(cluster: str, name: str) -> str:
    return f"cluster/{cluster}/model/{name}"


def _suffix(idempotency_key: str | None) -> str:
    """Unique per download; the same for a replay of one Idempotency-Key (same params)."""
    if idempotency_key:
        return hashlib.sha256(idempotency_key.encode()).hexdigest()[:8]
    return secrets.token_hex(4)


async def _bucket(ctx: Ctx, kube: KubePort, cluster: str) -> str:
    bucket = await bucket_of(ctx, cluster)
    if not bucket or await kube.get("v1", "PersistentVolumeClaim", CLAIM, NAMESPACE) is None:
        raise Conflict(f"Cluster {cluster!r} has no shared bucket mounted (claim {CLAIM!r}).",
                       hint="Models are written through the bucket's Mountpoint claim; create "
                       "the cluster with its shared storage.")
    return bucket


def _reads(where: Shape, bucket: str) -> str:
    """The S3 prefix the Job reads (None: the Hugging Face Hub)."""
    if where["source_key"] is None:
        return "the Hugging Face Hub"
    return f"s3://{where['source_bucket'] or bucket}/{where['source_key']}/"


@service(Effect.CREATE, "model.download",
         target=lambda cluster, request, *_a, **_k: target(cluster, request.name))
async def download_model(ctx: Ctx, cluster: str, request: dl.DownloadRequest, *,
                         idempotency_key: str | None = None) -> Outcome:
    ref, kube = await kube_of(ctx, cluster)
    suffix = _suffix(idempotency_key)
    job_name, secret_name = dl.names(request.name, suffix)
    secret = secret_name if request.hf_token is not None else None
    params: Shape = {"cluster_ref": ref.params(), "download": request.public(),
                     "id": suffix, "job": job_name, "secret": secret}
    if await key_used(ctx, idempotency_key):  # a replay returns its operation
        return await replay(ctx, DOWNLOAD, target(cluster, request.name), params,
                            idempotency_key)
    bucket = await _bucket(ctx, kube, cluster)
    aws = cloud_of(ctx.app).aws
    where = await download_sources.resolve(aws.s3, request.source, bucket, aws.region)
    prefix = f"{dl.PREFIX}{request.name}/"
    if await aws.s3.list_objects(bucket, prefix):
        taken = ModelExists(f"{dl.destination(bucket, request.name)} already holds objects.",
                            hint="Choose another name (Mountpoint does not overwrite files), "
                            "or delete that prefix first.")
        return await unchanged_or(taken, ctx, DOWNLOAD, target(cluster, request.name),
                                  request.public(), {"model": request.name}, request.dry_run,
                                  field="download")
    params.update(bucket=bucket, **where)
    source_key = where["source_key"]
    manifest = dl.job(params["download"], job_name, secret, suffix, source_key,
                      ds.volume_names(job_name) if where["source_bucket"] else None)
    plan: Shape = {"model": request.name, "source": request.source,
                   "revision": request.revision or ("main" if source_key is None else None),
                   "reads": _reads(where, bucket),
                   "destination": dl.destination(bucket, request.name), "job": job_name,
                   "token_secret": secret, "steps": [
                       "secret: check the token's Secret",
                       "job: create the source volume if any, then the Job; record its uid",
                       "wait: watch that Job (by uid) to completion",
                       "verify: list the objects (config.json, weights)",
                       "cleanup: delete the token's Secret and the source volume"],
                   "manifest": manifest}
    if request.dry_run:
        return Outcome(True, plan, dry_run=True)
    if request.hf_token is not None:
        await kube.apply(dl.secret(secret_name, request.name, request.hf_token), force=True)
    try:
        return await start(ctx, DOWNLOAD, target(cluster, request.name), params,
                           idempotency_key, plan)
    except Exception:  # refused (target busy, key reused): the Secret goes too
        if secret:
            with contextlib.suppress(NotFound, CloudError):
                await kube.delete("v1", "Secret", secret, namespace=NAMESPACE)
        raise


@service(Effect.READ, "model.list")
async def list_models(ctx: Ctx, cluster: str) -> list[Shape]:
    """The folders under s3://<bucket>/models/ with their files and bytes, and whether each
    looks like a model (config.json and a weights file)."""
    _, kube = await kube_of(ctx, cluster)
    bucket = await _bucket(ctx, kube, cluster)
    objects = await cloud_of(ctx.app).aws.s3.list_objects(bucket, dl.PREFIX)
    names = sorted({o["Key"][len(dl.PREFIX):].split("/", 1)[0] for o in objects
                    if "/" in o["Key"][len(dl.PREFIX):]})
    out = []
    for name in names:
        prefix = f"{dl.PREFIX}{name}/"
        found = dl.landed(objects, prefix)
        out.append({"name": name, "uri": dl.destination(bucket, name), "files": found["files"],
                    "bytes": found["bytes"], "complete": not found["missing"]})
    return out
