"""Mountpoint for S3 volumes as the kubelet sees them: a pod whose PVC is bound to an
`s3.csi.aws.com` PV starts only when the mount succeeds, and `cat` of a file under the mount
prints the object.

Rules (docs/sandbox.md, "EKS and add-ons"), each from the Mountpoint for S3 CSI driver docs
(awslabs/mountpoint-s3-csi-driver, "Configuration" and "Troubleshooting") and EKS Pod Identity
docs: the mount is done by the driver's node pod (`s3-csi-node`) on the pod's node, so it needs
that pod running there; the driver's credentials come from Pod Identity, so that node pod must
have been admitted after the association for `kube-system/s3-csi-driver-sa` existed, the
association must still exist, and the Pod Identity agent must run on the node. Otherwise the
kubelet keeps the pod in ContainerCreating and records FailedMount events (retrying).

A PV's `prefix <p>/` mount option mounts only the keys under that prefix (Mountpoint
doc/CONFIGURATION.md "Mounting a bucket prefix": `--prefix`, ending in `/`; the CSI driver's
static provisioning docs pass Mountpoint options as `mountOptions` without the dashes): a
file `<mountPath>/<subPath>/<f>` is the object `<p><subPath>/<f>`.
"""

from __future__ import annotations

from typing import Any

from podplane_sandbox.kube import launchers
from podplane_sandbox.kube.pod_identity import has_credentials

Obj = dict[str, Any]
DRIVER = "s3.csi.aws.com"
CSI_NAMESPACE, CSI_ACCOUNT = "kube-system", "s3-csi-driver-sa"
_OUTPUTS: dict[tuple[str, str], str] = {}  # (pod uid, container) -> what it printed


def install(ctx: Any, source: Any, eks_cluster_name: str | None) -> None:
    """Let the kubelet check S3 mounts, when the AWS side offers Pod Identity and S3."""
    if hasattr(source, "pod_identity_role") and hasattr(source, "s3_object"):
        ctx.s3_mounts = S3Mounts(ctx.store, source, eks_cluster_name)
        ctx.store.buckets = ctx.s3_mounts  # the fake Jupyter lists and writes through it


def mount_problem(ctx: Any, pod: Obj) -> str | None:
    """Called by the kubelet before it starts a pod's containers: the FailedMount message."""
    mounts = getattr(ctx, "s3_mounts", None)
    return mounts.problem(pod) if mounts is not None else None


def record_output(pod: Obj, container: str, text: str) -> None:
    """What a container printed (container_shell.py), shown as its log."""
    _OUTPUTS[(pod["metadata"].get("uid", ""), container)] = text


def command_output(pod: Obj, container: str) -> str | None:
    return _OUTPUTS.get((pod["metadata"].get("uid", ""), container))


class S3Mounts:
    def __init__(self, store: Any, source: Any, eks_cluster_name: str | None) -> None:
        self.store, self.source, self.cluster = store, source, eks_cluster_name

    def problem(self, pod: Obj) -> str | None:
        volumes = self._s3_volumes(pod)
        if not volumes:
            return None
        node = pod["spec"].get("nodeName", "")
        for volume, (bucket, _) in volumes.items():
            reason = self._mount_error(node, bucket)
            if reason is not None:
                return (f'MountVolume.SetUp failed for volume "{volume}" : rpc error: '
                        f"code = Internal desc = {reason}")
        self._record_reads(pod, volumes)
        return None

    def _mount_error(self, node: str, bucket: str) -> str | None:
        driver = self._running_on(node, "s3-csi-node")
        if driver is None:
            return (f"driver name {DRIVER} not found in the list of registered CSI drivers "
                    f"(no s3-csi-node pod running on {node})")
        role = self.source.pod_identity_role(self.cluster, CSI_NAMESPACE, CSI_ACCOUNT)
        agent = self._running_on(node, "eks-pod-identity-agent")
        if not has_credentials(driver) or role is None or agent is None:
            return (f'Could not mount "{bucket}": Failed to create S3 client: no credentials '
                    f"for {CSI_NAMESPACE}/{CSI_ACCOUNT} (Pod Identity association, agent, or "
                    "a driver pod admitted before the association)")
        blocked = getattr(self.source, "s3_blocked", None)  # the node's subnet reaches S3?
        node_obj = self.store.find("nodes", "", node) if blocked is not None else None
        reason = blocked(node_obj) if node_obj is not None else None
        return reason or self._list_refused(bucket, role)

    def _list_refused(self, bucket: str, role: str) -> str | None:
        """Mountpoint lists the bucket before it mounts; S3's refusal fails the mount
        (awslabs/mountpoint-s3 doc/TROUBLESHOOTING.md: "initial ListObjectsV2 failed for
        bucket ..." under "Failed to create S3 client")."""
        refusal = getattr(self.source, "s3_refusal", None)
        refused = refusal(bucket, None, role) if refusal is not None else None
        if refused is None:
            return None
        code = "NoSuchBucket" if refused.startswith("NoSuchBucket") else "Forbidden"
        return (f"Failed to create S3 client: initial ListObjectsV2 failed for bucket {bucket}: "
                f"Client error: {code}: {refused}")

    def _running_on(self, node: str, app: str) -> Obj | None:
        for p in self.store.items("pods", "kube-system"):
            labels = p["metadata"].get("labels") or {}
            if (labels.get("app.kubernetes.io/name") == app
                    and p["spec"].get("nodeName") == node
                    and (p.get("status") or {}).get("phase") == "Running"):
                return p  # type: ignore[no-any-return]
        return None

    def _s3_volumes(self, pod: Obj) -> dict[str, tuple[str, str]]:
        return s3_volumes(self.store, pod)

    def _record_reads(self, pod: Obj, volumes: dict[str, tuple[str, str]]) -> None:
        """What `cat <file under the mount>` prints: the object, or cat's error."""
        for c in pod["spec"].get("containers") or []:
            argv = list(c.get("command") or []) + list(c.get("args") or [])
            if len(argv) != 2 or argv[0] not in ("cat", "/bin/cat"):
                continue
            for mount in c.get("volumeMounts") or []:
                prefix = mount["mountPath"].rstrip("/") + "/"
                if mount["name"] in volumes and argv[1].startswith(prefix):
                    bucket, key = object_key(volumes[mount["name"]], mount,
                                             argv[1][len(prefix):])
                    data = self.source.s3_object(bucket, key)
                    _OUTPUTS[(pod["metadata"]["uid"], c["name"])] = (
                        data.decode(errors="replace") if data is not None
                        else f"cat: {argv[1]}: No such file or directory")

    def write(self, pod: Obj, seconds: float) -> str | None:
        """Rank 0's result files into its S3-mounted output directories (see below)."""
        volumes = self._s3_volumes(pod)
        if not volumes or not _rank_zero(pod):
            return None
        role = self.source.pod_identity_role(self.cluster, CSI_NAMESPACE, CSI_ACCOUNT)
        for c in pod["spec"].get("containers") or []:
            dirs = {e.get("value"): e["name"] for e in c.get("env") or []
                    if e.get("name") in ("OUTPUT_DIR", "CHECKPOINT_DIR")}
            for mount in c.get("volumeMounts") or []:
                kind = dirs.get(mount["mountPath"])
                if kind is None or mount["name"] not in volumes:
                    continue
                for name, data in _files(kind, seconds).items():
                    bucket, key = object_key(volumes[mount["name"]], mount, name)
                    error = self.source.put_s3_object(bucket, key, data, role or "")
                    if error is not None:
                        return f"writing {mount['mountPath']}/{name}: {error}"
        return None


def s3_volumes(store: Any, pod: Obj) -> dict[str, tuple[str, str]]:
    """Pod volume name -> (bucket, key prefix), for volumes whose claim is bound to a
    Mountpoint PV."""
    ns = pod["metadata"].get("namespace", "default")
    out = {}
    for v in pod["spec"].get("volumes") or []:
        claim = (v.get("persistentVolumeClaim") or {}).get("claimName")
        pvc = store.find("persistentvolumeclaims", ns, claim) if claim else None
        pv_name = ((pvc or {}).get("spec") or {}).get("volumeName")
        pv = store.find("persistentvolumes", "", pv_name) if pv_name else None
        csi = ((pv or {}).get("spec") or {}).get("csi") or {}
        if csi.get("driver") == DRIVER:
            bucket = (csi.get("volumeAttributes") or {}).get("bucketName", "")
            out[v["name"]] = (bucket, mount_prefix(pv or {}))
    return out


def mount_prefix(pv: Obj) -> str:
    """The `prefix` mount option (`prefix data/`, `--prefix=data/`), else ""."""
    for option in (pv.get("spec") or {}).get("mountOptions") or []:
        words = str(option).strip().lstrip("-").replace("=", " ").split()
        if len(words) == 2 and words[0] == "prefix":
            return words[1]
    return ""


def object_key(volume: tuple[str, str], mount: Obj, relative: str) -> tuple[str, str]:
    """(bucket, key) of `relative` under a container's mount of a Mountpoint volume."""
    bucket, prefix = volume
    parts = [p for p in ((mount.get("subPath") or "").strip("/"), relative.strip("/")) if p]
    return bucket, prefix + "/".join(parts)


# -- what a training run leaves in its mounted output directories ----------------------------
# A finished training process saves its result where the job told it to (the pod's
# OUTPUT_DIR / CHECKPOINT_DIR), in the layout Hugging Face's Trainer uses (`save_model`:
# config.json and model.safetensors; `train_results.json`; `checkpoint-<step>/` per save;
# huggingface/transformers trainer.py). Only global rank 0 writes, as those trainers do. Through
# a Mountpoint volume each file is a new object at <subPath>/<file>, written with the CSI
# driver's role: refused unless that role may s3:PutObject on it, and then the process fails.

def write_outputs(ctx: Any, pod: Obj, seconds: float) -> str | None:
    """Called by the kubelet when a container exits 0; the write error, else None."""
    mounts = getattr(ctx, "s3_mounts", None)
    return mounts.write(pod, seconds) if mounts is not None else None


def _files(kind: str, seconds: float) -> dict[str, bytes]:
    step = int(seconds // 5) * 10  # the step the training log printed last (logs.py)
    if kind == "CHECKPOINT_DIR":
        return {f"checkpoint-{step}/trainer_state.json":
                f'{{"global_step": {step}}}\n'.encode()}
    return {"config.json": b'{"architectures": ["SandboxModel"]}\n',
            "model.safetensors": b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ",
            "train_results.json": f'{{"global_step": {step}, "train_runtime": '
                                  f'{seconds:.0f}}}\n'.encode()}


def _rank_zero(pod: Obj) -> bool:
    """Global rank 0 as the process knows it: the HyperPod operator's node rank, else what the
    container's launcher read (launchers.py: a launcher that was not told the rendezvous makes
    every pod a rank 0 of its own, and each writes), else the Kubeflow Master."""
    meta = pod["metadata"]
    rank = (meta.get("annotations") or {}).get("sandbox.podplane.io/node-rank")
    if rank is not None:
        return bool(rank == "0")
    containers = (pod.get("spec") or {}).get("containers") or []
    launch = launchers.ranks(containers[0]) if containers else None
    if launch is not None:
        return launch.first_rank == 0
    labels = meta.get("labels") or {}
    kubeflow = labels.get("training.kubeflow.org/replica-type")
    if kubeflow is not None:
        return bool(kubeflow.lower() == "master")
    return bool(labels.get("batch.kubernetes.io/job-completion-index", "0") == "0")
