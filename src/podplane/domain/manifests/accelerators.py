"""Instance types each HyperPod dependency is scheduled to, by `node.kubernetes.io/instance-type`.

The lists follow the HyperPod dependencies chart (aws/sagemaker-hyperpod-cli @ 011ca927,
`helm_chart/HyperPodHelmChart`): the health-monitoring agent's two DaemonSets, the NVIDIA and EFA
plugin values in the umbrella `values.yaml`, and the neuron-device-plugin DaemonSet.
"""

from __future__ import annotations

from typing import Any

INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"


def _family(family: str, sizes: str) -> tuple[str, ...]:
    return tuple(f"ml.{family}.{size}" for size in sizes.split())


_G_SIZES = "xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 48xlarge"
_P_TYPES = ("ml.p4d.24xlarge", "ml.p4de.24xlarge", "ml.p5.4xlarge", "ml.p5.48xlarge",
            "ml.p5e.48xlarge", "ml.p5en.48xlarge", "ml.p6-b200.48xlarge",
            "ml.p6-b300.48xlarge", "ml.p6e-gb200.36xlarge")

# NVIDIA GPU types: the agent's GPU DaemonSet and the NVIDIA device plugin use the same set.
NVIDIA_TYPES: tuple[str, ...] = (
    _family("g5", _G_SIZES) + _family("g6", _G_SIZES) + _family("g6e", _G_SIZES)
    + _family("g7e", "2xlarge 4xlarge 8xlarge 12xlarge 24xlarge 48xlarge")
    + _family("gr6", "4xlarge 8xlarge") + _P_TYPES)

# Trainium/Inferentia types of the agent's non-NVIDIA DaemonSet.
NEURON_AGENT_TYPES: tuple[str, ...] = (
    _family("inf2", "xlarge 8xlarge 24xlarge 48xlarge")
    + ("ml.trn1.32xlarge", "ml.trn1n.32xlarge", "ml.trn2.3xlarge", "ml.trn2.48xlarge"))

# Neuron device plugin (the chart lists ml.* and the plain EC2 names).
NEURON_PLUGIN_TYPES: tuple[str, ...] = (
    _family("inf2", "xlarge 8xlarge 24xlarge 48xlarge")
    + ("ml.trn1.2xlarge", "ml.trn1.32xlarge", "ml.trn1n.32xlarge", "ml.trn2.48xlarge"))

# EFA-capable types (chart values, after AWS's EC2 "EFA supported instance types").
EFA_TYPES: tuple[str, ...] = (
    ("ml.c5n.9xlarge", "ml.c5n.18xlarge")
    + _family("g5", "8xlarge 12xlarge 16xlarge 24xlarge 48xlarge")
    + _family("g6", "8xlarge 12xlarge 16xlarge 24xlarge 48xlarge")
    + _family("g6e", "8xlarge 12xlarge 16xlarge 24xlarge 48xlarge")
    + _family("g7e", "8xlarge 12xlarge 24xlarge 48xlarge")
    + ("ml.gr6.8xlarge", "ml.i3en.12xlarge", "ml.i3en.24xlarge", "ml.m7i.48xlarge")
    + _P_TYPES
    + ("ml.r7i.48xlarge", "ml.trn1.32xlarge", "ml.trn1n.32xlarge", "ml.trn2.3xlarge",
       "ml.trn2.48xlarge"))


def on_instance_types(types: tuple[str, ...]) -> dict[str, Any]:
    """A pod affinity that requires one of `types`."""
    term = {"matchExpressions": [{"key": INSTANCE_TYPE_LABEL, "operator": "In",
                                  "values": list(types)}]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [term]}}}
