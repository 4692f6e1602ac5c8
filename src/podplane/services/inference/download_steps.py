"""model.download as a workflow (step names are stored: never rename):

- `secret`: the token's Secret (written before the operation started) is there, or none is
  needed.
- `job`: for a source in another bucket, its read-only volume (PV and claim) first; then the
  Job unless it exists; record its uid. A Job of that name that this download did not make
  (another download id) is refused, never adopted.
- `wait`: watch *that* Job (by uid) until Complete or Failed. A Job of the same name with
  another uid (deleted and recreated by someone else) is not ours: the step fails saying so.
  On failure: the pod's reason and its last log lines (anything shaped like a token scrubbed).
  A source bucket the CSI driver's role may not read shows as the pod's FailedMount event
  (Mountpoint lists the bucket when it mounts): the Job is deleted and the step fails naming
  the bucket, instead of waiting for a pod that never starts.
- `verify`: ListObjectsV2 under models/<name>/: config.json and a weights file, sizes > 0.
- `cleanup`: delete the token's Secret and the source volume (the Job stays for its logs).

Cancel (the workflow's cancel hook) deletes the Job (its pods go with it), the Secret and the
source volume, so nothing keeps writing into the bucket.
"""

from __future__ import annotations

import contextlib
from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import CloudError, NotFound
from podplane.domain.inference import download_sources as ds
from podplane.domain.inference import downloads as dl
from podplane.domain.jobs.kinds import NAMESPACE
from podplane.ops.context import StepContext
from podplane.ops.workflows import Workflow
from podplane.services import scope
from podplane.services.cloud_access import Cloud

DOWNLOAD = "model.download"
POLL_SECONDS = 10.0
WAIT_SECONDS = 6 * 3600.0  # hundreds of GB take hours
LOG_LINES = 10
Shape = dict[str, Any]


def declare(cloud: Cloud) -> list[Workflow]:
    s = DownloadSteps(cloud)
    return [Workflow.of(DOWNLOAD, ("secret", s.secret), ("job", s.job), ("wait", s.wait),
                        ("verify", s.verify), ("cleanup", s.cleanup), on_cancel=s.cancel)]


def _fail(message: str, code: str, hint: str | None = None) -> CloudError:
    return CloudError(dl.scrub(message), code=code, retryable=False, hint=hint)


def _finished(job: Shape) -> str | None:
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return str(c["type"])
    return None


class DownloadSteps:
    def __init__(self, cloud: Cloud) -> None:
        self.cloud = cloud

    async def kube(self, ctx: StepContext) -> KubePort:
        return await self.cloud.kube_for(scope.ClusterRef.of(ctx.params).eks)

    async def secret(self, ctx: StepContext) -> Shape:
        name = ctx.params.get("secret")
        if not name:
            return {"secret": None}
        await ctx.phase("checking")  # a crash point (crash sweep); a resumed check re-reads
        if await (await self.kube(ctx)).get("v1", "Secret", name, NAMESPACE) is None:
            raise _fail(f"The token's Secret {name} is gone.", "model_token_missing",
                        "Start the download again with the token.")
        return {"secret": name}

    async def job(self, ctx: StepContext) -> Shape:
        kube, name, p = await self.kube(ctx), ctx.params["job"], ctx.params
        found = await kube.get("batch/v1", "Job", name, NAMESPACE)
        if found is None:
            await ctx.phase("creating")
            claim = await self._source_volume(kube, p)
            manifest = dl.job(p["download"], name, p["secret"], p["id"], p["source_key"], claim)
            found = await kube.apply(manifest)
            ctx.crash_point("after_call")
        annotations = found["metadata"].get("annotations") or {}
        if annotations.get(dl.DOWNLOAD_ANNOTATION) != p["id"]:
            raise _fail(f"A Job named {name} exists that this download did not create.",
                        "model_job_not_ours", "Start the download again (a new Job name).")
        uid = str(found["metadata"]["uid"])
        if ctx.checkpoint.get("job_uid", uid) != uid:  # made, then replaced before we resumed
            raise _fail(f"Job {name} was replaced (uid {uid}, ours was "
                        f"{ctx.checkpoint['job_uid']}); not ours, not watched.",
                        "model_job_replaced", "Start the download again.")
        await ctx.remember(job_uid=uid)
        if p["secret"]:  # the Secret goes with the Job (owner-reference GC)
            await kube.patch("v1", "Secret", p["secret"], {"metadata": {"ownerReferences": [
                {"apiVersion": "batch/v1", "kind": "Job", "name": name, "uid": uid}]}},
                namespace=NAMESPACE)
        return {"job": name, "uid": uid}

    async def _source_volume(self, kube: KubePort, p: Shape) -> str | None:
        """Another bucket's read-only volume (its PV and claim), or None for the cluster's."""
        bucket = p.get("source_bucket")
        if not bucket:
            return None
        for manifest in ds.source_volume(p["job"], bucket, p.get("source_region"),
                                         dl.labels(p["download"]["name"])):
            await kube.apply(manifest, force=True)
        return ds.volume_names(p["job"])

    async def wait(self, ctx: StepContext) -> Shape:
        kube, name = await self.kube(ctx), ctx.params["job"]
        uid, waited = ctx.results["uid"], 0.0
        await ctx.phase("polling", uid=uid)
        while True:
            job = await kube.get("batch/v1", "Job", name, NAMESPACE)
            if job is None:
                raise _fail(f"Job {name} (uid {uid}) was deleted before it finished.",
                            "model_job_gone", "Start the download again.")
            if job["metadata"].get("uid") != uid:
                raise _fail(f"Job {name} was replaced: uid {job['metadata'].get('uid')} is "
                            f"not the Job this download created (uid {uid}); not ours, not "
                            "watched.", "model_job_replaced",
                            "Find who recreated it; start the download again.")
            state = _finished(job)
            if state == "Complete":
                return {"job": name, "uid": uid, "status": "Complete"}
            if state == "Failed":
                await self._drop_secret(kube, ctx)
                raise _fail(f"Job {name} failed: {await _why(kube, uid)}",
                            "model_download_failed",
                            "Read the reason; fix the source, revision or token and start "
                            "again (a new name if files landed).")
            denied = await _source_refused(kube, uid, ctx.params.get("source_bucket"))
            if denied:
                await self.cancel(ctx.params, {"uid": uid})
                bucket = ctx.params["source_bucket"]
                raise _fail(f"The Job's pod cannot read s3://{bucket}/ ({denied}); the Job was "
                            "deleted.", "model_source_denied",
                            "Let the Mountpoint CSI driver's role (Pod Identity of "
                            "kube-system/s3-csi-driver-sa) read it: in the bucket's policy, "
                            "allow it s3:ListBucket on the bucket and s3:GetObject on the "
                            "prefix; then start again.")
            if waited >= WAIT_SECONDS:
                raise CloudError(f"Job {name} still running after {int(WAIT_SECONDS)} s.",
                                 code="model_download_slow", retryable=False,
                                 hint="Retry this step to keep waiting.")
            await ctx.sleep(POLL_SECONDS)
            waited += POLL_SECONDS

    async def verify(self, ctx: StepContext) -> Shape:
        bucket, model = ctx.params["bucket"], ctx.params["download"]["name"]
        prefix = f"{dl.PREFIX}{model}/"
        await ctx.phase("listing")
        found = dl.landed(await self.cloud.aws.s3.list_objects(bucket, prefix), prefix)
        if found["missing"] or found["empty"]:
            what = ", ".join(found["missing"] + [f"{f} is empty" for f in found["empty"]])
            raise _fail(f"{dl.destination(bucket, model)} is not a complete model: {what} "
                        f"({found['files']} files).", "model_incomplete",
                        "Check the source holds a model (config.json and weights).")
        return {"uri": dl.destination(bucket, model), "files": found["files"],
                "bytes": found["bytes"]}

    async def cleanup(self, ctx: StepContext) -> Shape:
        await ctx.phase("deleting")
        kube = await self.kube(ctx)
        dropped = await self._drop_secret(kube, ctx)
        await _drop_volume(kube, ctx.params)
        ctx.crash_point("after_call")
        return {"secret_deleted": dropped}

    async def cancel(self, params: Shape, result: Shape) -> None:
        """Nothing of a cancelled download keeps running: its Job (if this download made it;
        its pods are deleted with it), the token's Secret, the source volume."""
        kube = await self.cloud.kube_for(scope.ClusterRef.of(params).eks)
        job = await kube.get("batch/v1", "Job", params["job"], NAMESPACE)
        ours = (job or {}).get("metadata", {}).get("annotations", {}).get(dl.DOWNLOAD_ANNOTATION)
        if job is not None and ours == params["id"]:
            with contextlib.suppress(NotFound):
                await kube.delete("batch/v1", "Job", params["job"], namespace=NAMESPACE,
                                  propagation="Background")
        if params.get("secret"):
            with contextlib.suppress(NotFound):
                await kube.delete("v1", "Secret", params["secret"], namespace=NAMESPACE)
        await _drop_volume(kube, params)

    async def _drop_secret(self, kube: KubePort, ctx: StepContext) -> bool:
        name = ctx.params.get("secret")
        if not name:
            return False
        with contextlib.suppress(NotFound):  # already gone (a resumed step)
            await kube.delete("v1", "Secret", name, namespace=NAMESPACE)
        return True


async def _drop_volume(kube: KubePort, params: Shape) -> None:
    """The source volume's claim, then its PV (Retain: the bucket is untouched)."""
    if not params.get("source_bucket"):
        return
    name = ds.volume_names(params["job"])
    with contextlib.suppress(NotFound):
        await kube.delete("v1", "PersistentVolumeClaim", name, namespace=NAMESPACE)
    with contextlib.suppress(NotFound):
        await kube.delete("v1", "PersistentVolume", name)


# Mountpoint's own words when S3 refuses its first ListObjectsV2 (awslabs/mountpoint-s3
# doc/TROUBLESHOOTING.md, "Access denied"), carried in the kubelet's FailedMount event.
REFUSALS = ("AccessDenied", "Access Denied", "Forbidden", "NoSuchBucket")


async def _source_refused(kube: KubePort, uid: str, bucket: str | None) -> str | None:
    """The FailedMount message of a pod of the Job when S3 refused the source bucket."""
    if not bucket:
        return None
    pods = await kube.list("v1", "Pod", namespace=NAMESPACE,
                           labels={"batch.kubernetes.io/controller-uid": uid})
    for pod in pods:
        events = await kube.list("v1", "Event", namespace=NAMESPACE,
                                 fields={"involvedObject.name": pod["metadata"]["name"]})
        for e in events:
            message = str(e.get("message") or "")
            if e.get("reason") == "FailedMount" and bucket in message and \
                    any(r in message for r in REFUSALS):
                return message
    return None


async def _why(kube: KubePort, uid: str) -> str:
    """The failed pod's terminated reason and exit code, and its last log lines."""
    pods = await kube.list("v1", "Pod", namespace=NAMESPACE,
                           labels={"batch.kubernetes.io/controller-uid": uid})
    if not pods:
        return "no pod left to read."
    pod = pods[-1]
    parts = []
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        term = (cs.get("state") or {}).get("terminated") or {}
        if term:
            parts.append(f"container {cs['name']} {term.get('reason')} "
                         f"(exit {term.get('exitCode')})")
    lines: list[str] = []
    with contextlib.suppress(NotFound, CloudError):
        async for line in kube.logs(pod["metadata"]["name"], NAMESPACE,
                                    container=dl.CONTAINER, tail_lines=LOG_LINES):
            lines.append(line.rstrip("\n"))
    tail = " | ".join(x for x in lines if x)
    return "; ".join(parts) + (f"; last log lines: {tail}" if tail else "")
