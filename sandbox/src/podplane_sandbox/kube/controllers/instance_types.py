"""Capacity of SageMaker HyperPod instance types: (vCPU, memory GiB, NVIDIA GPUs, EFA
interfaces, Neuron devices). Values follow the EC2 instance specifications."""

from __future__ import annotations

CAPACITY: dict[str, tuple[int, int, int, int, int]] = {
    "ml.p5.48xlarge": (192, 2048, 8, 32, 0),
    "ml.p5e.48xlarge": (192, 2048, 8, 32, 0),
    "ml.p5en.48xlarge": (192, 2048, 8, 16, 0),
    "ml.p4d.24xlarge": (96, 1152, 8, 4, 0),
    "ml.p4de.24xlarge": (96, 1152, 8, 4, 0),
    "ml.p6-b200.48xlarge": (192, 2048, 8, 8, 0),
    "ml.g5.xlarge": (4, 16, 1, 0, 0),
    "ml.g5.2xlarge": (8, 32, 1, 0, 0),
    "ml.g5.4xlarge": (16, 64, 1, 0, 0),
    "ml.g5.8xlarge": (32, 128, 1, 1, 0),
    "ml.g5.12xlarge": (48, 192, 4, 1, 0),
    "ml.g5.24xlarge": (96, 384, 4, 0, 0),
    "ml.g5.48xlarge": (192, 768, 8, 1, 0),
    "ml.g6.12xlarge": (48, 192, 4, 0, 0),
    "ml.g6e.12xlarge": (48, 384, 4, 0, 0),
    "ml.g6e.48xlarge": (192, 1536, 8, 4, 0),
    "ml.trn1.32xlarge": (128, 512, 0, 8, 16),
    "ml.trn2.48xlarge": (192, 2048, 0, 16, 16),
    "ml.m5.xlarge": (4, 16, 0, 0, 0),
    "ml.m5.2xlarge": (8, 32, 0, 0, 0),
    "ml.m5.4xlarge": (16, 64, 0, 0, 0),
    "ml.m5.12xlarge": (48, 192, 0, 0, 0),
    "ml.c5.xlarge": (4, 8, 0, 0, 0),
    "ml.c5.2xlarge": (8, 16, 0, 0, 0),
    "ml.t3.medium": (2, 4, 0, 0, 0),
}
_SIZES = {"medium": 1, "large": 2, "xlarge": 4}

# Network bandwidth in Gbps, the "Network bandwidth (Gbps)" column of the EC2 instance type
# specifications (docs.aws.amazon.com/ec2/latest/instancetypes/ac.html and gp.html, "Network
# specifications"); "up to N" sizes at N. What an NCCL test across nodes can reach
# (controllers/nccl.py). Types not listed: 10.
NETWORK_GBPS: dict[str, int] = {
    "ml.p5.48xlarge": 3200, "ml.p5e.48xlarge": 3200, "ml.p5en.48xlarge": 3200,
    "ml.p4d.24xlarge": 400, "ml.p4de.24xlarge": 400, "ml.p6-b200.48xlarge": 3200,
    "ml.g5.4xlarge": 25, "ml.g5.8xlarge": 25, "ml.g5.12xlarge": 40, "ml.g5.24xlarge": 50,
    "ml.g5.48xlarge": 100, "ml.g6.12xlarge": 40, "ml.g6e.12xlarge": 100,
    "ml.g6e.48xlarge": 400, "ml.trn1.32xlarge": 800, "ml.trn2.48xlarge": 3200,
}


def network_gbps(instance_type: str) -> int:
    return NETWORK_GBPS.get(instance_type, 10)


def capacity(instance_type: str) -> tuple[int, int, int, int, int]:
    if instance_type in CAPACITY:
        return CAPACITY[instance_type]
    size = instance_type.rsplit(".", 1)[-1]
    cpus = _SIZES.get(size) or (
        int(size[:-6]) * 4 if size.endswith("xlarge") and size[:-6].isdigit() else 4
    )
    return (cpus, cpus * 4, 0, 0, 0)


# NeuronCores per Neuron device (trn1/inf2: 2; trn2: 4 logical cores at the default LNC=2).
CORES_PER_DEVICE = {"trn1": 2, "trn1n": 2, "inf2": 2, "trn2": 4}


def resources(instance_type: str, plugins: frozenset[str] | set[str] = frozenset()
              ) -> tuple[dict[str, str], dict[str, str]]:
    """(capacity, allocatable) as node status maps. Extended resources appear only for the
    device plugins registered on the node (`plugins`: nvidia, efa, neuron)."""
    cpu, mem, gpu, efa, neuron = capacity(instance_type)
    cap = {
        "cpu": str(cpu),
        "memory": f"{mem}Gi",
        "pods": "110",
        "ephemeral-storage": "500Gi",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
    }
    alloc = {
        "cpu": f"{cpu * 1000 - 100 - cpu * 6}m",
        "memory": f"{mem * 1024 - 1024 - mem * 8}Mi",
        "pods": "110",
        "ephemeral-storage": "460Gi",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
    }
    family = instance_type.removeprefix("ml.").split(".")[0]
    for name, count, plugin in (
        ("nvidia.com/gpu", gpu, "nvidia"),
        ("vpc.amazonaws.com/efa", efa, "efa"),
        ("aws.amazon.com/neuron", neuron, "neuron"),
        ("aws.amazon.com/neurondevice", neuron, "neuron"),
        ("aws.amazon.com/neuroncore", neuron * CORES_PER_DEVICE.get(family, 2), "neuron"),
    ):
        if count and plugin in plugins:
            cap[name] = alloc[name] = str(count)
    return cap, alloc
