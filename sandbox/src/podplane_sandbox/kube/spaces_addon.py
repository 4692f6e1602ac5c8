"""What the `amazon-sagemaker-spaces` and `aws-ebs-csi-driver` EKS add-ons apply.

Spaces: the workspace operator of jupyter-infra/jupyter-k8s (the add-on hyp's `hyp-space`
commands need: aws/sagemaker-hyperpod-cli `space/utils.py` SPACES_ADDON_NAME): its three
workspace.jupyter.org CRDs (workspace_crds.py), the controller's namespace, service account
and Deployment named as upstream's kustomize config makes them (`config/default`:
namespace `jupyter-k8s-system`, namePrefix `jupyter-k8s-`, `controller-manager`; AWS does
not publish the add-on's own names), and the StorageClass AWS's templates default to
(SageMaker docs "Customize add-on": `defaultStorageClassName:
sagemaker-spaces-default-storage-class`) on the EBS CSI driver (SageMaker docs "Set up
permissions": the EBS CSI driver add-on is always required, for the spaces' volumes). The
`connection.workspace.jupyter.org` API is the operator's extension API server; the sandbox
answers it in-process (workspace_connection.py).

EBS CSI: kubernetes-sigs/aws-ebs-csi-driver `charts/aws-ebs-csi-driver/templates`: the
`ebs.csi.aws.com` CSIDriver, the `ebs-csi-controller` Deployment (two replicas,
`ebs-csi-controller-sa`) and the `ebs-csi-node` DaemonSet (`ebs-csi-node-sa`) in kube-system.
"""

from __future__ import annotations

from podplane_sandbox.kube.manifest_parts import (
    Obj,
    account,
    meta_of,
    namespace_obj,
    workload,
)
from podplane_sandbox.kube.workspace_crds import workspace_crds

SPACES_NS = "jupyter-k8s-system"
SPACES_SA = "jupyter-k8s-controller-manager"
STORAGE_CLASS = "sagemaker-spaces-default-storage-class"
EBS_DRIVER = "ebs.csi.aws.com"
EBS_CONTROLLER = "ebs-csi-controller"


def spaces(ver: str, ecr: str, ctx: tuple[str, str]) -> list[Obj]:
    crds = []
    for crd in workspace_crds():
        crd["metadata"] = meta_of(crd["metadata"]["name"], None, *ctx)
        crds.append(crd)
    storage = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
               "metadata": meta_of(STORAGE_CLASS, None, *ctx), "provisioner": EBS_DRIVER,
               "reclaimPolicy": "Delete", "parameters": {"type": "gp3"}}
    return [namespace_obj(SPACES_NS, ctx), *crds, storage,
            account(SPACES_SA, SPACES_NS, ctx),
            workload("Deployment", SPACES_SA, SPACES_NS, f"{ecr}/eks/amazon-sagemaker-spaces:{ver}",
                     SPACES_SA, ctx, app="jupyter-k8s")]


def ebs_csi(ver: str, ecr: str, ctx: tuple[str, str]) -> list[Obj]:
    image = f"{ecr}/eks/aws-ebs-csi-driver:{ver}"
    driver = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
              "metadata": meta_of(EBS_DRIVER, None, *ctx),
              "spec": {"attachRequired": True, "podInfoOnMount": False}}
    return [driver, account("ebs-csi-controller-sa", "kube-system", ctx),
            account("ebs-csi-node-sa", "kube-system", ctx),
            workload("Deployment", EBS_CONTROLLER, "kube-system", image,
                     "ebs-csi-controller-sa", ctx, replicas=2),
            workload("DaemonSet", "ebs-csi-node", "kube-system", image, "ebs-csi-node-sa", ctx)]
