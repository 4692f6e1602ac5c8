"""Instance-type catalogue: what each HyperPod instance type carries and roughly costs.

Pure data, shared by the sandbox (capacity, node labels) and the product (choices, cost hints).
Prices are approximate us-west-2 on-demand USD/hour for SageMaker (`ml.*`) instances; they are
for orientation in the console, never for billing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class InstanceType:
    name: str                 # ml.p5.48xlarge
    vcpu: int
    memory_gib: int
    gpu_model: str | None     # e.g. "NVIDIA H100"; accelerators count as GPUs here
    gpu_count: int
    gpu_memory_gib: int       # per GPU
    efa_interfaces: int       # 0 = no EFA
    price_per_hour: float     # approximate on-demand USD

    @property
    def accelerated(self) -> bool:
        return self.gpu_count > 0


def _t(name: str, vcpu: int, mem: int, gpu: str | None, n: int, gmem: int, efa: int,
       price: float) -> InstanceType:
    return InstanceType(name, vcpu, mem, gpu, n, gmem, efa, price)


_ALL = [
    _t("ml.p5.48xlarge", 192, 2048, "NVIDIA H100", 8, 80, 32, 113.07),
    _t("ml.p5e.48xlarge", 192, 2048, "NVIDIA H200", 8, 141, 32, 124.0),
    _t("ml.p5en.48xlarge", 192, 2048, "NVIDIA H200", 8, 141, 16, 128.0),
    _t("ml.p4d.24xlarge", 96, 1152, "NVIDIA A100", 8, 40, 4, 37.69),
    _t("ml.p4de.24xlarge", 96, 1152, "NVIDIA A100", 8, 80, 4, 47.11),
    _t("ml.trn1.32xlarge", 128, 512, "AWS Trainium", 16, 32, 8, 24.72),
    _t("ml.trn1n.32xlarge", 128, 512, "AWS Trainium", 16, 32, 16, 27.2),
    _t("ml.g5.xlarge", 4, 16, "NVIDIA A10G", 1, 24, 0, 1.41),
    _t("ml.g5.2xlarge", 8, 32, "NVIDIA A10G", 1, 24, 0, 1.52),
    _t("ml.g5.8xlarge", 32, 128, "NVIDIA A10G", 1, 24, 1, 3.4),
    _t("ml.g5.12xlarge", 48, 192, "NVIDIA A10G", 4, 24, 1, 7.09),
    _t("ml.g5.48xlarge", 192, 768, "NVIDIA A10G", 8, 24, 1, 20.36),
    _t("ml.g6.xlarge", 4, 16, "NVIDIA L4", 1, 24, 0, 1.01),
    _t("ml.g6e.xlarge", 4, 32, "NVIDIA L40S", 1, 48, 0, 2.34),
    _t("ml.g6e.48xlarge", 192, 1536, "NVIDIA L40S", 8, 48, 4, 37.65),
    _t("ml.m5.xlarge", 4, 16, None, 0, 0, 0, 0.23),
    _t("ml.m5.2xlarge", 8, 32, None, 0, 0, 0, 0.46),
    _t("ml.m5.12xlarge", 48, 192, None, 0, 0, 0, 2.76),
    _t("ml.c5.xlarge", 4, 8, None, 0, 0, 0, 0.2),
    _t("ml.c5.4xlarge", 16, 32, None, 0, 0, 0, 0.82),
    _t("ml.t3.medium", 2, 4, None, 0, 0, 0, 0.05),
]

CATALOG: dict[str, InstanceType] = {t.name: t for t in _ALL}


def lookup(name: str) -> InstanceType | None:
    """The catalogue entry for `ml.x` (or the EC2 spelling `x`), if known."""
    return CATALOG.get(name) or CATALOG.get(f"ml.{name}")
