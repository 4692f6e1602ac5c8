"""The shared S3 bucket as a Mountpoint for S3 CSI volume: a static PV and its claim."""

from __future__ import annotations

from podplane.domain.manifests.common import Manifest, meta

CLAIM = "s3-claim"
UNIT = "shared-storage"


def s3_volume(bucket: str, region: str, namespace: str = "default",
              claim: str = CLAIM) -> list[Manifest]:
    pv_name = f"{claim}-pv"
    version = "1"
    return [
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta(pv_name, UNIT, version),
         "spec": {"capacity": {"storage": "1200Gi"}, "accessModes": ["ReadWriteMany"],
                  "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "",
                  "claimRef": {"namespace": namespace, "name": claim},
                  "mountOptions": ["allow-delete", "allow-other", f"region {region}"],
                  "csi": {"driver": "s3.csi.aws.com", "volumeHandle": f"s3-csi-{bucket}",
                          "volumeAttributes": {"bucketName": bucket}}}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": meta(claim, UNIT, version, namespace),
         "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "",
                  "resources": {"requests": {"storage": "1200Gi"}}, "volumeName": pv_name}},
    ]
