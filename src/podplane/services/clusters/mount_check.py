"""Verify that the shared bucket really mounts: write a file to it, read it back from a pod
that mounts the Mountpoint PVC, compare. The step fails with the kubelet's reason when not."""

from __future__ import annotations

from typing import Any

from podplane.cloud.ports_kube import KubePort
from podplane.domain.errors import CloudError
from podplane.domain.manifests.storage import CLAIM
from podplane.domain.mount_check import KEY, POD, check_content, check_pod
from podplane.ops.context import StepContext
from podplane.services.cloud_access import Cloud

POLL = 5.0
DEADLINE = 300.0  # virtual seconds: a mount and a `cat` take seconds once the driver runs
NAMESPACE = "default"


async def run(ctx: StepContext, cloud: Cloud, eks_name: str, bucket: str) -> dict[str, Any]:
    await ctx.phase("mount-check", bucket=bucket)
    expected = check_content(ctx.client_token("mount-check"))
    await cloud.aws.s3.put_object(bucket, KEY, expected.encode())
    kube = await cloud.kube_for(eks_name)
    await _fresh_pod(ctx, kube)
    try:
        phase = await _wait_finished(ctx, kube)
        read = "".join([line async for line in kube.logs(POD, NAMESPACE)]).strip()
    finally:
        await kube.delete("v1", "Pod", POD, namespace=NAMESPACE)
        await cloud.aws.s3.delete_object(bucket, KEY)
    if phase != "Succeeded" or read != expected:
        raise CloudError(f"The mount test pod could not read s3://{bucket}/{KEY} through "
                         f"{CLAIM} (pod {phase}; read {read[:120]!r}).", code="mount_failed",
                         retryable=False, hint=_HINT)
    return {"mount": "ok", "read_back": f"s3://{bucket}/{KEY}"}


async def _fresh_pod(ctx: StepContext, kube: KubePort) -> None:
    if await kube.get("v1", "Pod", POD, NAMESPACE) is not None:
        await kube.delete("v1", "Pod", POD, namespace=NAMESPACE)
        for _ in range(int(DEADLINE / POLL)):
            if await kube.get("v1", "Pod", POD, NAMESPACE) is None:
                break
            await ctx.sleep(POLL)
    await kube.apply(check_pod(CLAIM, NAMESPACE), force=True)


async def _wait_finished(ctx: StepContext, kube: KubePort) -> str:
    for _ in range(int(DEADLINE / POLL)):
        pod = await kube.get("v1", "Pod", POD, NAMESPACE) or {}
        phase = str((pod.get("status") or {}).get("phase", "Pending"))
        if phase in ("Succeeded", "Failed"):
            return phase
        await ctx.sleep(POLL)
    reasons = await _events(kube)
    raise CloudError(f"The mount test pod did not finish in {int(DEADLINE)} s: "
                     f"{reasons or 'no events'}.", code="mount_failed", retryable=False,
                     hint=_HINT)


async def _events(kube: KubePort) -> str:
    events = await kube.list("v1", "Event", namespace=NAMESPACE,
                             fields={"involvedObject.name": POD})
    warnings = [e for e in events if e.get("type") == "Warning"]
    return "; ".join(f"{e.get('reason')}: {e.get('message')}" for e in warnings[-3:])


_HINT = ("Check the Mountpoint add-on (aws eks describe-addon --addon-name "
         "aws-mountpoint-s3-csi-driver), its Pod Identity association for "
         "kube-system/s3-csi-driver-sa and that role's access to the bucket; s3-csi-node pods "
         "started before the association have no credentials (restart them: kubectl rollout "
         "restart daemonset s3-csi-node -n kube-system), then retry the verify step.")
