"""The shared S3 bucket as a Mountpoint for S3 CSI volume: a static PV and its claim.

Static provisioning (awslabs/mountpoint-s3-csi-driver, examples/kubernetes/static_provisioning
and its README): the PV names the bucket in `volumeAttributes`, Mountpoint's options go in its
`mountOptions` (awslabs/mountpoint-s3 doc/CONFIGURATION.md: `prefix <p>/` mounts only the
keys under that prefix), and volumes one pod mounts together need distinct `volumeHandle`s.
"""

from __future__ import annotations

from podplane.domain.manifests.common import Manifest, meta

CLAIM = "s3-claim"
UNIT = "shared-storage"


def s3_volume(bucket: str, region: str, namespace: str = "default",
              claim: str = CLAIM, prefix: str = "") -> list[Manifest]:
    """`prefix` ("data/"): the volume shows only that part of the bucket, at its root."""
    pv_name = f"{claim}-pv"
    version = "1"
    handle = f"s3-csi-{bucket}" + (f"-{prefix.strip('/')}" if prefix else "")
    options = ["allow-delete", "allow-other", f"region {region}"] + (
        [f"prefix {prefix}"] if prefix else [])
    return [
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta(pv_name, UNIT, version),
         "spec": {"capacity": {"storage": "1200Gi"}, "accessModes": ["ReadWriteMany"],
                  "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "",
                  "claimRef": {"namespace": namespace, "name": claim},
                  "mountOptions": options,
                  "csi": {"driver": "s3.csi.aws.com", "volumeHandle": handle,
                          "volumeAttributes": {"bucketName": bucket}}}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": meta(claim, UNIT, version, namespace),
         "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "",
                  "resources": {"requests": {"storage": "1200Gi"}}, "volumeName": pv_name}},
    ]
