"""What HyperPod rules need to know about an instance type, from AWS's public documentation
(kept apart from podplane's catalogue on purpose: the sandbox must not agree by construction).

- Accelerated: GPU (p*, g*) and Trainium (trn*) types, the only ones the deep health checks
  are defined for (AWS docs, "Deep health checks" for HyperPod EKS: every check is listed for
  GPU or Trainium instances).
- EFA: the instance types of the EC2 User Guide's "Supported instance types" table for EFA.
"""

from __future__ import annotations

_EFA_SIZES = {"g5": ("8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge"),
              "g6": ("8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge"),
              "g6e": ("8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge"),
              "gr6": ("8xlarge",), "p4d": ("24xlarge",), "p4de": ("24xlarge",),
              "p5": ("48xlarge",), "p5e": ("48xlarge",), "p5en": ("48xlarge",),
              "p6-b200": ("48xlarge",), "p6-b300": ("48xlarge",), "p6e-gb200": ("36xlarge",),
              "trn1": ("32xlarge",), "trn1n": ("32xlarge",), "trn2": ("48xlarge",),
              "c5n": ("9xlarge", "18xlarge")}


def _family_size(instance_type: str) -> tuple[str, str]:
    parts = instance_type.removeprefix("ml.").split(".")
    return parts[0], parts[-1]


def accelerated(instance_type: str) -> bool:
    family, _ = _family_size(instance_type)
    return family.startswith(("p", "g", "trn"))


def efa_capable(instance_type: str) -> bool:
    family, size = _family_size(instance_type)
    return size in _EFA_SIZES.get(family, ())
