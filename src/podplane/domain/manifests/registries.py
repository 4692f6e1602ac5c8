"""Where the images of the HyperPod dependencies live, per region (no I/O: tables only).

- The health-monitoring agent is in a private SageMaker ECR repository, one account per region
  (hyperpod-cli `helm_chart/HyperPodHelmChart/charts/health-monitoring-agent/templates/
  _helpers.tpl`). Regions outside that map fall back to us-east-1, as the chart does.
- EKS-built images (the EFA device plugin, the add-ons) are replicated to one registry per
  region; most regions use account 602401143452 (AWS docs "View Amazon container image
  registries for Amazon EKS add-ons").
"""

from __future__ import annotations

HMA_ACCOUNTS = {
    "us-east-1": "767398015722", "us-west-2": "905418368575", "us-east-2": "851725546812",
    "us-west-1": "011528288828", "eu-central-1": "211125453373", "eu-north-1": "654654141839",
    "eu-west-1": "533267293120", "eu-west-2": "011528288831", "eu-south-2": "626887787726",
    "ap-northeast-1": "533267052152", "ap-south-1": "011528288864",
    "ap-southeast-1": "905418428165", "ap-southeast-2": "851725636348",
    "ap-southeast-3": "971422672635", "ap-southeast-4": "084375568333",
    "ca-central-1": "843976229209", "sa-east-1": "025066253954",
}
HMA_FALLBACK_REGION = "us-east-1"

EKS_DEFAULT_ACCOUNT = "602401143452"
EKS_ACCOUNTS = {
    "af-south-1": "877085696533", "ap-east-1": "800184023465", "ap-south-2": "900889452093",
    "ap-southeast-3": "296578399912", "ap-southeast-4": "491585149902",
    "ca-west-1": "761377655185", "cn-north-1": "918309763551", "cn-northwest-1": "961992271922",
    "eu-central-2": "900612956339", "eu-south-1": "590381155156", "eu-south-2": "455263428931",
    "il-central-1": "066635153087", "me-central-1": "759879836304",
    "me-south-1": "558608220178", "us-gov-east-1": "151742754352",
    "us-gov-west-1": "013241004608",
}


def dns_suffix(region: str) -> str:
    """The AWS partition's DNS suffix (China regions use amazonaws.com.cn)."""
    return "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"


def ecr_host(account: str, region: str) -> str:
    return f"{account}.dkr.ecr.{region}.{dns_suffix(region)}"


def hma_registry(region: str) -> str:
    """The health-monitoring agent's registry host for a cluster in `region`."""
    if region not in HMA_ACCOUNTS:
        region = HMA_FALLBACK_REGION
    return ecr_host(HMA_ACCOUNTS[region], region)


def eks_registry(region: str) -> str:
    """The regional registry of EKS-built images (`<host>/eks/<name>:<tag>`)."""
    return ecr_host(EKS_ACCOUNTS.get(region, EKS_DEFAULT_ACCOUNT), region)
