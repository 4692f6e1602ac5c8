"""Which container images a sandbox node can pull.

Real kubelets pull from registries; the sandbox knows a fixed catalogue instead and fails every
other image as kubelet does (`ErrImagePull`, then `ImagePullBackOff`). Add images here, one line
each, with the exact tags that exist upstream.

- Public images: exact repository and tag (Docker Hub short names are normalised the way
  containerd does: `busybox` is `docker.io/library/busybox:latest`).
- Private regional ECR: the HyperPod health-monitoring agent per region and account
  (hyperpod-cli chart `charts/health-monitoring-agent/templates/_helpers.tpl`), and EKS-built
  images in the EKS registry of each region (AWS docs "View Amazon container image registries
  for Amazon EKS add-ons"; EKS replicates every add-on version there, so any tag of a listed
  repository pulls). An account/region pair that does not match is `403 Forbidden` on AWS.
"""

from __future__ import annotations

import re

PUBLIC: dict[str, frozenset[str]] = {
    "nvcr.io/nvidia/k8s-device-plugin": frozenset({"v0.16.1", "v0.16.2", "v0.17.0", "v0.17.1"}),
    "public.ecr.aws/neuron/neuron-device-plugin": frozenset({"2.19.16.0"}),
    "public.ecr.aws/eks/aws-efa-k8s-device-plugin": frozenset({"v0.5.7", "v0.5.20"}),
    "public.ecr.aws/eks/eks-pod-identity-agent": frozenset({"0.1.29", "v0.1.37"}),
    "quay.io/jetstack/cert-manager-controller": frozenset({"v1.18.2", "v1.20.2"}),
    "quay.io/jetstack/cert-manager-cainjector": frozenset({"v1.18.2", "v1.20.2"}),
    "quay.io/jetstack/cert-manager-webhook": frozenset({"v1.18.2", "v1.20.2"}),
    # The Kubeflow operators of the HyperPod dependencies chart (aws/sagemaker-hyperpod-cli
    # @ 011ca927, chart 0.1.0: charts/training-operators and charts/mpi-operator values.yaml).
    "docker.io/kubeflow/training-operator": frozenset({"v1-855e096"}),
    "docker.io/mpioperator/mpi-operator": frozenset({"0.5"}),
    # Managed features: ray-project/kuberay helm-chart/kuberay-operator values.yaml (image
    # quay.io/kuberay/operator, tag = release); kedacore/keda config/manager, metrics-server.
    "quay.io/kuberay/operator": frozenset({"v1.7.0"}),
    "ghcr.io/kedacore/keda": frozenset({"2.20.2"}),
    "ghcr.io/kedacore/keda-metrics-apiserver": frozenset({"2.20.2"}),
    "registry.k8s.io/pause": frozenset({"3.9", "3.10"}),
    "registry.k8s.io/coredns/coredns": frozenset({"v1.11.3", "v1.12.0"}),
    "docker.io/library/busybox": frozenset({"1.36", "1.37", "latest"}),
    "docker.io/library/nginx": frozenset({"1.27", "latest"}),
    "docker.io/library/python": frozenset({"3.12-slim"}),
    "docker.io/pytorch/pytorch": frozenset({"2.5.1-cuda12.4-cudnn9-runtime",
                                            "2.5.1-cuda12.4-cudnn9-devel"}),
    "docker.io/vllm/vllm-openai": frozenset({"v0.9.0", "latest"}),
    # AWS Deep Learning Containers, "Large Model Inference (LMI)" images (available_images.md
    # in aws/deep-learning-containers): the container JumpStart LLMs run on HyperPod.
    "763104351884.dkr.ecr.us-west-2.amazonaws.com/djl-inference": frozenset({
        "0.33.0-lmi15.0.0-cu128"}),
    "docker.io/lmsysorg/sglang": frozenset({"v0.4.6.post5-cu124", "latest"}),  # SGLang releases
    # the SGLang router's build (sgl-project/sglang docker/Dockerfile.router), as sgl-project/rbg
    # examples/inference deploy it
    "docker.io/lmsysorg/sglang-router": frozenset({"v0.2.4"}),
    "docker.io/rayproject/ray": frozenset({"2.40.0", "latest"}),
    # Ray with vLLM, CUDA 13.0 (ray-project/kuberay ray-operator/config/samples/
    # ray-service.high-throughput-llm.yaml): the VERL recipe's head and workers
    "docker.io/rayproject/ray-llm": frozenset({"2.56.0-py312-cu130"}),
    "nvcr.io/nvidia/nemo": frozenset({"24.05", "24.07"}),
    "nvcr.io/nvidia/pytorch": frozenset({"24.12-py3", "25.01-py3"}),
    "docker.io/fluent/fluent-bit": frozenset({"3.2", "3.2.4"}),
    # training recipes: LLaMA-Factory's README ("Build Docker": hiyouga/llamafactory:latest);
    # MS-Swift's docs (GetStarted/SWIFT-installation.md, "Mirror", the swift3.8.3 image)
    "docker.io/hiyouga/llamafactory": frozenset({"latest"}),
    # SageMaker Distribution, the spaces' default images (SageMaker docs "Customize add-on");
    # tags `<version>-cpu|gpu` for each release (aws/sagemaker-distribution README, "Image
    # tags"); 3.2.0 is the one jupyter-k8s's idle-shutdown sample runs
    "public.ecr.aws/sagemaker/sagemaker-distribution": frozenset({
        "latest-cpu", "latest-gpu", "3.2.0-cpu", "3.2.0-gpu"}),
    "modelscope-registry.us-west-1.cr.aliyuncs.com/modelscope-repo/modelscope": frozenset({
        "ubuntu22.04-cuda12.6.3-py311-torch2.7.1-vllm0.10.1.1-modelscope1.29.2-swift3.8.3"}),
}

HMA_REPOSITORY = "hyperpod-health-monitoring-agent"
HMA_TAGS = frozenset({"1.0.1892.0_1.0.424.0"})
HMA_REGISTRY: dict[str, str] = {  # region -> account (the chart's map)
    "us-east-1": "767398015722", "us-east-2": "851725546812", "us-west-1": "011528288828",
    "us-west-2": "905418368575", "ca-central-1": "843976229209", "sa-east-1": "025066253954",
    "eu-central-1": "211125453373", "eu-north-1": "654654141839", "eu-west-1": "533267293120",
    "eu-west-2": "011528288831", "eu-south-2": "626887787726", "ap-south-1": "011528288864",
    "ap-northeast-1": "533267052152", "ap-southeast-1": "905418428165",
    "ap-southeast-2": "851725636348", "ap-southeast-3": "971422672635",
    "ap-southeast-4": "084375568333",
}
EKS_REGISTRY_ACCOUNT = "602401143452"  # the EKS registry of the commercial regions the sandbox runs
EKS_REPOSITORIES = frozenset({
    "amazon-k8s-cni", "amazon-k8s-cni-init", "amazon/aws-network-policy-agent",
    "eks/coredns", "eks/kube-proxy", "eks/eks-pod-identity-agent", "eks/aws-efa-k8s-device-plugin",
    "eks/aws-s3-csi-driver", "eks/csi-node-driver-registrar", "eks/livenessprobe", "eks/pause",
    "eks/hyperpod-training-operator",  # add-on image; AWS does not publish its repository name
    "eks/aws-fsx-csi-driver",  # the FSx CSI add-on build (upstream: public.ecr.aws/fsx-csi-driver)
    # the inference operator add-on's build (the chart's own image is hyperpod-inference-operator
    # in per-region accounts, charts/inference-operator/values.yaml)
    "eks/hyperpod-inference-operator",
    "eks/aws-ebs-csi-driver",  # the EBS CSI add-on build
    "eks/amazon-sagemaker-spaces",  # add-on image; AWS does not publish its repository name
})
ECR = re.compile(r"^(\d{12})\.dkr\.ecr\.([a-z0-9-]+)\.amazonaws\.com$")


def normalise(image: str) -> tuple[str, str]:
    """(registry/repository, tag) the way containerd resolves a reference."""
    name = image.partition("@")[0]
    tag = "latest"
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        name, tag = name.rsplit(":", 1)
    first = name.split("/", 1)[0]
    if "/" not in name or not ("." in first or ":" in first or first == "localhost"):
        name = "docker.io/" + (name if "/" in name else "library/" + name)
    return name, tag


def pull_error(image: str) -> str | None:
    """None when the catalogue has `image`, else the registry's error as kubelet reports it.
    Whether the node can reach the registry at all is the AWS side's answer (`pull_blocked` of
    contracts.NetworkView), asked by the kubelet before this."""
    repo, tag = normalise(image)
    host, _, path = repo.partition("/")
    ecr = ECR.match(host)
    if ecr:
        return _ecr_error(repo, tag, ecr.group(1), ecr.group(2), path)
    if tag in PUBLIC.get(repo, frozenset()):
        return None
    ref = f"{repo}:{tag}"
    return (f'failed to pull and unpack image "{ref}": failed to resolve reference "{ref}": '
            f"{ref}: not found")


def _ecr_error(repo: str, tag: str, account: str, ecr_region: str, path: str) -> str | None:
    ref = f"{repo}:{tag}"
    known = ((path == HMA_REPOSITORY and HMA_REGISTRY.get(ecr_region) == account
              and tag in HMA_TAGS)
             or (path in EKS_REPOSITORIES and account == EKS_REGISTRY_ACCOUNT)
             or tag in PUBLIC.get(repo, frozenset()))   # Deep Learning Containers
    if known:
        return None
    return (f'failed to pull and unpack image "{ref}": failed to resolve reference "{ref}": '
            f"unexpected status from HEAD request to https://{repo.split('/', 1)[0]}/v2/"
            f"{path}/manifests/{tag}: 403 Forbidden")
