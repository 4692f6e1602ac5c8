"""FSx for Lustre volumes as the kubelet sees them: a pod whose PVC is bound to an
`fsx.csi.aws.com` PV starts only when the Lustre mount would succeed.

Rules, from kubernetes-sigs/aws-fsx-csi-driver (`pkg/driver/node.go` mounts
`<dnsname>@tcp:/<mountname>` from the PV's `volumeAttributes`; the chart's `fsx-csi-node`
DaemonSet registers the driver on each node; `examples/kubernetes/static_provisioning`) and the
FSx Lustre User Guide (a file system serves clients while AVAILABLE, or UPDATING):

- the driver's node pod must be running on the pod's node (else the kubelet does not know the
  driver);
- the PV's `volumeHandle` must name a file system FSx has, in AVAILABLE or UPDATING;
- `dnsname` and `mountname` must be that file system's (a wrong one fails `mount.lustre`).

Otherwise the kubelet keeps the pod in ContainerCreating with FailedMount events (retrying).
Static mounts call no AWS API, so the driver's credentials do not matter here.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
DRIVER = "fsx.csi.aws.com"
NODE_APP = "fsx-csi-node"
SERVING = ("AVAILABLE", "UPDATING")


def mount_problem(ctx: Any, pod: Obj) -> str | None:
    """The FailedMount message for the pod's first FSx volume that cannot mount, or None."""
    source = getattr(ctx, "node_source", None)
    if source is None or not hasattr(source, "fsx_file_system"):
        return None
    node = pod["spec"].get("nodeName", "")
    for volume, csi in _fsx_volumes(ctx.store, pod).items():
        reason = _mount_error(ctx.store, source, node, csi)
        if reason is not None:
            return (f'MountVolume.SetUp failed for volume "{volume}" : rpc error: '
                    f"code = Internal desc = {reason}")
    return None


def _mount_error(store: Any, source: Any, node: str, csi: Obj) -> str | None:
    if not _driver_on(store, node):
        return (f"driver name {DRIVER} not found in the list of registered CSI drivers "
                f"(no {NODE_APP} pod running on {node})")
    attrs = csi.get("volumeAttributes") or {}
    target = f"{attrs.get('dnsname')}@tcp:/{attrs.get('mountname')}"
    found = source.fsx_file_system(csi.get("volumeHandle", ""))
    if found is None or found.get("Lifecycle") not in SERVING:
        state = "does not exist" if found is None else f"is {found.get('Lifecycle')}"
        return (f'Could not mount "{target}": mount failed: exit status 5 (file system '
                f"{csi.get('volumeHandle')} {state})")
    mount = (found.get("LustreConfiguration") or {}).get("MountName")
    if (attrs.get("dnsname"), attrs.get("mountname")) != (found.get("DNSName"), mount):
        return (f'Could not mount "{target}": mount.lustre: mount {target} failed: '
                "No such file or directory")
    return None


def _driver_on(store: Any, node: str) -> bool:
    for p in store.items("pods", "kube-system"):
        labels = p["metadata"].get("labels") or {}
        if (labels.get("app.kubernetes.io/name") == NODE_APP
                and p["spec"].get("nodeName") == node
                and (p.get("status") or {}).get("phase") == "Running"):
            return True
    return False


def _fsx_volumes(store: Any, pod: Obj) -> dict[str, Obj]:
    """Pod volume name -> the `csi` block of the FSx PV its claim is bound to."""
    ns = pod["metadata"].get("namespace", "default")
    out = {}
    for v in pod["spec"].get("volumes") or []:
        claim = (v.get("persistentVolumeClaim") or {}).get("claimName")
        pvc = store.find("persistentvolumeclaims", ns, claim) if claim else None
        pv_name = ((pvc or {}).get("spec") or {}).get("volumeName")
        pv = store.find("persistentvolumes", "", pv_name) if pv_name else None
        csi = ((pv or {}).get("spec") or {}).get("csi") or {}
        if csi.get("driver") == DRIVER:
            out[v["name"]] = csi
    return out
