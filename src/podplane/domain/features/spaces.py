"""Dev spaces (SageMaker Spaces: JupyterLab and Code Editor on the cluster) as a feature.

What it is made of, in creation order (domain/features/render.py, `spaces`):

- The EBS CSI driver, which provisions each space's home volume: an IAM role for its controller
  with the AWS managed `AmazonEBSCSIDriverPolicy` (EKS User Guide, "Amazon EBS CSI driver"
  add-on: service account `kube-system/ebs-csi-controller-sa`) plus what HyperPod adds (SageMaker
  docs, "Using the Amazon EBS CSI driver on SageMaker HyperPod EKS clusters", additional
  permissions: `sagemaker:AttachClusterNodeVolume`/`DetachClusterNodeVolume`, here on this
  cluster only, and `eks:DescribeCluster` on its EKS cluster), the Pod Identity association,
  then the `aws-ebs-csi-driver` add-on. That page asks for driver v1.47.0 or later.
- StorageClass `space-home` (gp3 through `ebs.csi.aws.com`, bound where the pod lands), the
  cluster's default class: a space whose storage names no class gets it (jupyter-infra/
  jupyter-k8s docs/source/concepts/workspaces/storage.md, storageClassName defaults to the
  cluster default).
- The Spaces add-on's execution role (SageMaker docs, "Set up permissions" for Spaces: always
  required; trust `pods.eks.amazonaws.com` for this account's EKS cluster; AWS managed
  `AmazonSageMakerSpacesControllerPolicy`), its association for the controller's service
  account `jupyter-k8s-system/jupyter-k8s-controller-manager` (jupyter-infra/jupyter-k8s
  `dist/install.yaml`), then the `amazon-sagemaker-spaces` add-on (EKS User Guide, AWS add-ons,
  "Amazon SageMaker Spaces"; aws/sagemaker-hyperpod-cli `src/sagemaker/hyperpod/space/utils.py`,
  SPACES_ADDON_NAME).
- The shared claims a space mounts at the jobs' paths: static Mountpoint for S3 volumes of the
  cluster bucket, one per prefix (domain/manifests/storage.py).

Not made (the same page lists them): the router role and External DNS, for the web UI on a
custom domain, and the SSM managed-instance role, for remote IDEs over SSM. podplane reaches a
space through the API server's service proxy, which needs none of them.
"""

from __future__ import annotations

from typing import Any

from podplane.domain.manifests.common import Manifest
from podplane.domain.manifests.storage import s3_volume

Shape = dict[str, Any]
NAME = "spaces"
ADDON = "amazon-sagemaker-spaces"
NAMESPACE = "default"                    # where spaces live (hyp's default namespace)
# a space's mount path -> the claim it mounts there (the same paths jobs see)
SHARED_CLAIMS = {"/data": "space-data", "/models": "space-models", "/outputs": "space-outputs"}
# claim -> the cluster bucket's prefix it shows
PREFIXES = {"space-data": "data/", "space-models": "models/", "space-outputs": "outputs/"}
HOME_CLASS = "space-home"
EBS_ADDON = "aws-ebs-csi-driver"
EBS_DRIVER = "ebs.csi.aws.com"
EBS_CONTROLLER = ("kube-system", "ebs-csi-controller-sa")
EBS_POLICY = "arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy"
EBS_ROLE_PURPOSE = "ebs"
CONTROLLER = ("jupyter-k8s-system", "jupyter-k8s-controller-manager")
CONTROLLER_POLICY = "arn:aws:iam::aws:policy/AmazonSageMakerSpacesControllerPolicy"
CONTROLLER_ROLE_PURPOSE = "spaces"
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
# In what the services found: the EBS add-on is there and someone else's.
EBS_FOREIGN = "podplane:ebsAddonForeign"


def ebs_hyperpod_policy(hyperpod_arn: str, eks_arn: str) -> Shape:
    """HyperPod's additions to the driver's role, narrowed from the account's clusters to this
    one (no `*` action, no `*` resource)."""
    return {"Version": "2012-10-17", "Statement": [
        {"Sid": "AttachVolumesToClusterNodes", "Effect": "Allow",
         "Action": ["sagemaker:AttachClusterNodeVolume", "sagemaker:DetachClusterNodeVolume"],
         "Resource": hyperpod_arn},
        {"Sid": "DescribeEksCluster", "Effect": "Allow", "Action": "eks:DescribeCluster",
         "Resource": eks_arn}]}


def home_class() -> Manifest:
    """gp3, encrypted, expandable; the volume is made in the zone of the node the space's pod
    is scheduled to (WaitForFirstConsumer), and goes with its claim (Delete)."""
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": HOME_CLASS,
                         "annotations": {DEFAULT_CLASS_ANNOTATION: "true"}},
            "provisioner": EBS_DRIVER, "parameters": {"type": "gp3", "encrypted": "true"},
            "reclaimPolicy": "Delete", "volumeBindingMode": "WaitForFirstConsumer",
            "allowVolumeExpansion": True}


def shared_volumes(bucket: str, region: str) -> list[Manifest]:
    """Each claim's static PV and the claim, in namespace default."""
    out: list[Manifest] = []
    for claim in SHARED_CLAIMS.values():
        out += s3_volume(bucket, region, NAMESPACE, claim, PREFIXES[claim])
    return out


def mounts() -> list[Shape]:
    """What a space's Workspace lists under spec.volumes for the shared claims."""
    return [{"name": claim, "persistentVolumeClaimName": claim, "mountPath": path}
            for path, claim in SHARED_CLAIMS.items()]
