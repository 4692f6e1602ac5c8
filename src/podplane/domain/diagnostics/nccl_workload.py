"""The NCCL test's workload: a Kubeflow PyTorchJob (kubeflow.org/v1) with one pod per chosen
node, each taking all the node's GPUs and EFA interfaces, running an all-reduce sweep that
prints nccl-tests' `all_reduce_perf` table (pure).

Why a PyTorchJob. AWS's reference NCCL test on EKS is an MPIJob running nccl-tests'
`all_reduce_perf` under mpirun (awslabs/awsome-distributed-training,
micro-benchmarks/nccl-tests/kubernetes/nccl-tests.yaml); it needs the MPI operator and ssh
between pods. HyperPod's dependencies chart installs Kubeflow's training operator, whose
PyTorchJob gives each pod the rendezvous through `PET_*` variables that torchrun reads
(../shared/crds/kubeflow-training-operator/kubeflow.org_pytorchjobs.yaml; kubeflow/
training-operator pkg/controller.v1/pytorch/envvar.go). So the pods run torchrun with a short
script that times `torch.distributed.all_reduce` over message sizes and prints the same
columns, with nccl-tests' bus-bandwidth formula (doc/PERFORMANCE.md); NCCL_DEBUG=INFO makes
NCCL name its transport ("Using network AWS Libfabric" with EFA).

Placement: required node affinity on `kubernetes.io/hostname` pins the pods to the chosen
nodes; each pod requests every GPU of its node, so two never share one. The image must carry
the EFA libfabric and aws-ofi-nccl for NCCL to use EFA (the verdict flags a run that fell
back to sockets). `runPolicy.activeDeadlineSeconds` bounds a test that hangs even if podplane
is gone; the operation deletes the job when it ends, whatever the outcome.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NAMESPACE = "default"
API_VERSION, KIND = "kubeflow.org/v1", "PyTorchJob"
MANAGED_BY = "app.kubernetes.io/managed-by"
DIAGNOSIS_LABEL, OPERATION_LABEL = "podplane.io/diagnosis", "podplane.io/operation"
JOB_LABEL = "training.kubeflow.org/job-name"  # set by the operator on every pod
HOSTNAME = "kubernetes.io/hostname"
GPU, EFA = "nvidia.com/gpu", "vpc.amazonaws.com/efa"
IMAGE = "nvcr.io/nvidia/pytorch:25.01-py3"
CONTAINER = "pytorch"  # the PyTorchJob operator requires this container name
DEADLINE_SECONDS = 900
SCRIPT_PATH = "/tmp/all_reduce_perf.py"

# 8 MiB to 1 GiB, doubling; 5 warm-up and 20 timed iterations per size; rank 0 prints.
SCRIPT = """\
import os, time, torch, torch.distributed as dist
dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
rank, n = dist.get_rank(), dist.get_world_size()
say = print if rank == 0 else (lambda *a: None)
say("# all_reduce_perf (torch.distributed), nranks", n)
say("#       size         count      type   redop    root     time   algbw   busbw #wrong")
say("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)")
total = 0.0
sizes = [1 << p for p in range(23, 31)]
for size in sizes:
    x = torch.ones(size // 4, device="cuda")
    for _ in range(5):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(20):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    us = (time.perf_counter() - t) / 20 * 1e6
    alg = size / us / 1e3
    bus = alg * 2 * (n - 1) / n
    total += bus
    say(f"{size:12d} {size // 4:13d} {'float':>9} {'sum':>7} {-1:7d} {us:8.1f} "
        f"{alg:7.2f} {bus:7.2f} {'N/A':>6}")
say(f"# Avg bus bandwidth    : {total / len(sizes):.3f}")
dist.destroy_process_group()
"""


@dataclass(frozen=True)
class Placement:
    nodes: tuple[str, ...]  # Kubernetes Node names
    gpus: int  # per node
    efa: int  # per node (0: none requested)


def job_name(op_id: str, round_: str) -> str:
    """DNS-1123 and unique per operation and round ("all", "p0", ...)."""
    return f"nccl-{op_id.lower().removeprefix('op-')[:20]}-{round_}".replace("_", "-")


def render(name: str, op_id: str, where: Placement) -> dict[str, Any]:
    labels = {MANAGED_BY: "podplane", DIAGNOSIS_LABEL: "nccl", OPERATION_LABEL: op_id}
    template = _template(where, labels)
    specs: dict[str, Any] = {"Master": {"replicas": 1, "restartPolicy": "Never",
                                        "template": template}}
    if len(where.nodes) > 1:
        specs["Worker"] = {"replicas": len(where.nodes) - 1, "restartPolicy": "Never",
                           "template": template}
    return {"apiVersion": API_VERSION, "kind": KIND,
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
            "spec": {"nprocPerNode": str(where.gpus), "pytorchReplicaSpecs": specs,
                     "runPolicy": {"backoffLimit": 0, "cleanPodPolicy": "None",
                                   "activeDeadlineSeconds": DEADLINE_SECONDS}}}


def _template(where: Placement, labels: dict[str, str]) -> dict[str, Any]:
    limits: dict[str, Any] = {GPU: where.gpus}
    if where.efa:
        limits[EFA] = where.efa
    command = f"cat > {SCRIPT_PATH} <<'EOF'\n{SCRIPT}EOF\nexec torchrun {SCRIPT_PATH}\n"
    container = {
        "name": CONTAINER, "image": IMAGE, "command": ["bash", "-c", command],
        "env": [{"name": "NCCL_DEBUG", "value": "INFO"}],
        "resources": {"requests": {"cpu": "2", "memory": "8Gi", **limits}, "limits": limits},
        "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}]}
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": HOSTNAME, "operator": "In", "values": list(where.nodes)}]}]}}}
    return {"metadata": {"labels": labels},
            "spec": {"containers": [container], "affinity": affinity,
                     "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory"}}]}}
