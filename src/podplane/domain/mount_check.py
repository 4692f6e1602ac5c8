"""The storage smoke test of a create: a short pod mounts the shared bucket through the
Mountpoint PV/PVC and prints a file podplane wrote to the bucket just before.

A PVC that is Bound proves nothing about the mount: Mountpoint mounts at pod start, with the
CSI node pod's Pod Identity credentials, and a failure leaves the pod in ContainerCreating with
a FailedMount event (Mountpoint for S3 CSI driver docs, "Troubleshooting").
"""

from __future__ import annotations

from typing import Any

POD = "podplane-mount-check"
MOUNT_PATH = "/data"
KEY = "podplane/verify/mount-check.txt"
IMAGE = "docker.io/library/busybox:1.36"  # small, has cat; pulled through the NAT


def check_content(token: str) -> str:
    return f"podplane mount check {token}"


def check_pod(claim: str, namespace: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": POD, "namespace": namespace,
                     "labels": {"app.kubernetes.io/managed-by": "podplane",
                                "app.kubernetes.io/name": POD}},
        "spec": {"restartPolicy": "Never", "activeDeadlineSeconds": 600,
                 "containers": [{"name": "read", "image": IMAGE,
                                 "command": ["cat", f"{MOUNT_PATH}/{KEY}"],
                                 "volumeMounts": [{"name": "shared", "mountPath": MOUNT_PATH,
                                                   "readOnly": True}]}],
                 "volumes": [{"name": "shared",
                              "persistentVolumeClaim": {"claimName": claim}}]},
    }
