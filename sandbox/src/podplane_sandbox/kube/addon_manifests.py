"""What each EKS add-on installs into its cluster, by the names kubectl shows on a real cluster.

Names and namespaces follow the add-ons' upstream charts and EKS docs: vpc-cni (`aws-node`
DaemonSet, ENIConfig CRD; aws/amazon-vpc-cni-k8s charts), kube-proxy, eks-pod-identity-agent
(EKS docs "Set up the Amazon EKS Pod Identity Agent"), coredns (`coredns` Deployment and
`kube-dns` Service), cert-manager (three Deployments and the cert-manager.io CRDs;
cert-manager.io docs "Installation"), Mountpoint for S3 CSI v2 (`s3-csi-node` DaemonSet,
`s3-csi-controller` Deployment, `s3.csi.aws.com` CSIDriver; awslabs/mountpoint-s3-csi-driver
chart), and the HyperPod training operator (`aws-hyperpod` namespace, controller Deployment and
service account named in the SageMaker docs, the HyperPodPyTorchJob CRD). Written here from those
facts; nothing is copied. Images are the add-ons' registries (EKS add-ons from the regional
602401143452 ECR account).
"""

from __future__ import annotations

from podplane_sandbox.kube.hyperpod_training_crd import hyperpod_pytorchjob_crd
from podplane_sandbox.kube.manifest_parts import ADDON, EKS_ECR, Obj
from podplane_sandbox.kube.manifest_parts import account as _account
from podplane_sandbox.kube.manifest_parts import meta_of as _meta
from podplane_sandbox.kube.manifest_parts import namespace_obj as _namespace
from podplane_sandbox.kube.manifest_parts import open_crd as _crd
from podplane_sandbox.kube.manifest_parts import workload as _workload
from podplane_sandbox.kube.spaces_addon import ebs_csi, spaces

__all__ = ["ADDON", "BUILDERS", "objects_for"]


def _vpc_cni(ver: str, ecr: str, ctx: tuple[str, str]) -> list[Obj]:
    return [_account("aws-node", "kube-system", ctx),
            _crd("crd.k8s.amazonaws.com", "eniconfigs", "ENIConfig", ctx, "Cluster", "v1alpha1"),
            _workload("DaemonSet", "aws-node", "kube-system", f"{ecr}/amazon-k8s-cni:{ver}",
                      "aws-node", ctx)]


def _kube_proxy(ver: str, ecr: str, ctx: tuple[str, str]) -> list[Obj]:
    return [_account("kube-proxy", "kube-system", ctx),
            _workload("DaemonSet", "kube-proxy", "kube-system", f"{ecr}/eks/kube-proxy:{ver}",
                      "kube-proxy", ctx)]


def _pod_identity_agent(ver: str, ecr: str, ctx: tuple[str, str]) -> list[Obj]:
    return [_account("eks-pod-identity-agent", "kube-system", ctx),
            _workload("DaemonSet", "eks-pod-identity-agent", "kube-system",
                      f"{ecr}/eks/eks-pod-identity-agent:{ver}", "eks-pod-identity-agent", ctx)]


def _coredns(ver: str, ecr: str, ctx: tuple[str, str]) -> list[Obj]:
    service = {"apiVersion": "v1", "kind": "Service",
               "metadata": _meta("kube-dns", "kube-system", *ctx),
               "spec": {"selector": {"app.kubernetes.io/name": "coredns"},
                        "ports": [{"name": "dns", "port": 53, "protocol": "UDP"},
                                  {"name": "dns-tcp", "port": 53, "protocol": "TCP"}]}}
    return [_account("coredns", "kube-system", ctx), service,
            _workload("Deployment", "coredns", "kube-system", f"{ecr}/eks/coredns:{ver}",
                      "coredns", ctx, replicas=2)]


def _cert_manager(ver: str, ecr: str, ctx: tuple[str, str]) -> list[Obj]:
    tag = ver.split("-")[0]
    out = [_namespace("cert-manager", ctx)]
    for plural, kind in (("certificates", "Certificate"), ("issuers", "Issuer"),
                         ("clusterissuers", "ClusterIssuer"),
                         ("certificaterequests", "CertificateRequest")):
        out.append(_crd("cert-manager.io", plural, kind, ctx,
                        "Cluster" if kind == "ClusterIssuer" else "Namespaced"))
    for plural, kind in (("orders", "Order"), ("challenges", "Challenge")):
        out.append(_crd("acme.cert-manager.io", plural, kind, ctx))
    for name, image in (("cert-manager", "controller"), ("cert-manager-cainjector", "cainjector"),
                        ("cert-manager-webhook", "webhook")):
        out += [_account(name, "cert-manager", ctx),
                _workload("Deployment", name, "cert-manager",
                          f"quay.io/jetstack/cert-manager-{image}:{tag}", name, ctx)]
    return out


def _mountpoint(ver: str, ecr: str, ctx: tuple[str, str]) -> list[Obj]:
    tag = ver.split("-")[0]
    image = f"{ecr}/eks/aws-s3-csi-driver:{ver}"  # the EKS add-on's build
    driver = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
              "metadata": _meta("s3.csi.aws.com", None, *ctx),
              "spec": {"attachRequired": False, "podInfoOnMount": True}}
    out = [driver, _account("s3-csi-driver-sa", "kube-system", ctx),
           _workload("DaemonSet", "s3-csi-node", "kube-system", image, "s3-csi-driver-sa", ctx)]
    if tag >= "v2":  # v2 adds a controller that places Mountpoint pods
        out += [_crd("s3.csi.aws.com", "mountpoints3podattachments",
                     "MountpointS3PodAttachment", ctx, "Cluster", "v2"),
                _account("s3-csi-driver-controller-sa", "kube-system", ctx),
                _workload("Deployment", "s3-csi-controller", "kube-system", image,
                          "s3-csi-driver-controller-sa", ctx)]
    return out


def _fsx_csi(ver: str, ecr: str, ctx: tuple[str, str]) -> list[Obj]:
    """kubernetes-sigs/aws-fsx-csi-driver `charts/aws-fsx-csi-driver/templates`: the
    `fsx.csi.aws.com` CSIDriver (attachRequired false), the `fsx-csi-controller` Deployment
    (two replicas, `fsx-csi-controller-sa`) and the `fsx-csi-node` DaemonSet
    (`fsx-csi-node-sa`) in kube-system."""
    image = f"{ecr}/eks/aws-fsx-csi-driver:{ver}"
    driver = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
              "metadata": _meta("fsx.csi.aws.com", None, *ctx),
              "spec": {"attachRequired": False}}
    return [driver, _account("fsx-csi-controller-sa", "kube-system", ctx),
            _account("fsx-csi-node-sa", "kube-system", ctx),
            _workload("Deployment", "fsx-csi-controller", "kube-system", image,
                      "fsx-csi-controller-sa", ctx, replicas=2),
            _workload("DaemonSet", "fsx-csi-node", "kube-system", image, "fsx-csi-node-sa",
                      ctx)]


TRAINING_OPERATOR_NS = "aws-hyperpod"
TRAINING_OPERATOR_SA = "hp-training-operator-controller-manager"
# The label the official HyperPod CLI finds the operator's pods by: `hyp get-operator-logs
# hyp-pytorch-job` lists pods in `aws-hyperpod` with the selector `hp-training-control-plane`
# (a key that exists; aws/sagemaker-hyperpod-cli @ 011ca92
# src/sagemaker/hyperpod/training/hyperpod_pytorch_job.py TRAINING_OPERATOR_LABEL and its unit
# test's label_selector). Only the key is public; the value here is the controller's name.
TRAINING_CONTROL_PLANE = "hp-training-control-plane"


def _training_operator(ver: str, ecr: str, ctx: tuple[str, str]) -> list[Obj]:
    crd = hyperpod_pytorchjob_crd()
    crd["metadata"] = _meta(crd["metadata"]["name"], None, *ctx)
    return [_namespace(TRAINING_OPERATOR_NS, ctx), crd,
            _account(TRAINING_OPERATOR_SA, TRAINING_OPERATOR_NS, ctx),
            _workload("Deployment", TRAINING_OPERATOR_SA, TRAINING_OPERATOR_NS,
                      f"{ecr}/eks/hyperpod-training-operator:{ver}", TRAINING_OPERATOR_SA, ctx,
                      app="hp-training-operator",
                      pod_labels={TRAINING_CONTROL_PLANE: TRAINING_OPERATOR_SA})]


INFERENCE_NS = "hyperpod-inference-system"
INFERENCE_SA = "hyperpod-inference-controller-manager"
INFERENCE_GROUP = "inference.sagemaker.aws.amazon.com"


def _inference_operator(ver: str, ecr: str, ctx: tuple[str, str]) -> list[Obj]:
    """The inference operator add-on: aws/sagemaker-hyperpod-cli @ 011ca927,
    helm_chart/HyperPodHelmChart/charts/inference-operator (config/crd: the three
    inference.sagemaker.aws.amazon.com kinds, served at v1 with status and, for
    InferenceEndpointConfig and JumpStartModel, scale; the add-on's controller Deployment and
    service account names from migration/helm_to_addon.sh). Schemas are open here; tests
    validate podplane's manifests against ../shared/crds/hyperpod-inference."""
    out = [_namespace(INFERENCE_NS, ctx)]
    for plural, kind in (("inferenceendpointconfigs", "InferenceEndpointConfig"),
                         ("jumpstartmodels", "JumpStartModel"),
                         ("sagemakerendpointregistrations", "SageMakerEndpointRegistration")):
        crd = _crd(INFERENCE_GROUP, plural, kind, ctx)
        if kind != "SageMakerEndpointRegistration":
            crd["spec"]["versions"][0]["subresources"]["scale"] = {
                "specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
                "labelSelectorPath": ".status.selector"}
        out.append(crd)
    return out + [_account(INFERENCE_SA, INFERENCE_NS, ctx),
                  _workload("Deployment", INFERENCE_SA, INFERENCE_NS,
                            f"{ecr}/eks/hyperpod-inference-operator:{ver}", INFERENCE_SA, ctx,
                            app="hyperpod-inference-operator")]


BUILDERS = {
    "vpc-cni": _vpc_cni, "kube-proxy": _kube_proxy,
    "eks-pod-identity-agent": _pod_identity_agent, "coredns": _coredns,
    "cert-manager": _cert_manager, "aws-mountpoint-s3-csi-driver": _mountpoint,
    "aws-fsx-csi-driver": _fsx_csi,
    "amazon-sagemaker-hyperpod-training-operator": _training_operator,
    "amazon-sagemaker-hyperpod-inference": _inference_operator,
    "aws-ebs-csi-driver": ebs_csi, "amazon-sagemaker-spaces": spaces,
}


def objects_for(addon: str, version: str, region: str = "us-west-2") -> list[Obj]:
    """The objects the add-on applies, namespaces and CRDs first; other add-ons: a controller
    Deployment named after the add-on in kube-system."""
    ctx = (addon, version)
    ecr = EKS_ECR.format(region=region)
    build = BUILDERS.get(addon)
    if build is not None:
        return build(version, ecr, ctx)
    return [_account(addon, "kube-system", ctx),
            _workload("Deployment", addon, "kube-system", f"{ecr}/eks/{addon}:{version}",
                      addon, ctx)]
