"""Simulated container logs, derived from the pod and the virtual clock so they are the same
on every read: a training loop (step / loss / throughput), an inference server's start-up
and request lines, or a generic service heartbeat."""

from __future__ import annotations

import hashlib
import math
from typing import Any

from podplane_sandbox.kube import image_contents, launchers, s3_mounts
from podplane_sandbox.kube.util import iso, parse_iso

Obj = dict[str, Any]
TRAIN_EVERY = 5.0
SERVE_EVERY = 10.0
INFERENCE_HINTS = (
    "vllm",
    "tgi",
    "text-generation",
    "triton",
    "inference",
    "serve",
    "lmi",
    "djl",
    "sglang",
    "nim",
)
TRAINING_OWNERS = ("PyTorchJob", "HyperPodPyTorchJob")
TRAINING_HINTS = ("pytorch", "train", "nemo", "megatron", "deepspeed", "torch", "llama", "fsdp")
# what the HyperPod training operator tells its pods' `hyperpodrun` (sandbox bookkeeping on the
# pod; Kubeflow's operator sets environment variables instead, read by launchers.py)
NODE_RANK = "sandbox.podplane.io/node-rank"
NNODES = "sandbox.podplane.io/nnodes"
NPROC = "sandbox.podplane.io/nproc-per-node"
LAUNCHER_ERROR = "sandbox.podplane.io/launcher-error"
# a hung collective: the workers stay alive and write nothing more (PyTorch's NCCL watchdog
# stays silent until its timeout, torch.distributed `init_process_group(timeout=...)`)
HANG_AFTER = "sandbox.podplane.io/hang-after-seconds"
# a worker that dies of a GPU or collective fault (controllers/training_crashes.py)
CRASH = "sandbox.podplane.io/crash"


def kind_of(pod: Obj, container: Obj) -> str:
    hint = (pod["metadata"].get("annotations") or {}).get("sandbox.podplane.io/log-kind")
    if hint:
        return str(hint)
    owners = [r.get("kind") for r in pod["metadata"].get("ownerReferences") or []]
    if any(k in TRAINING_OWNERS for k in owners):  # a training operator's pod trains, whatever
        return "training"  # its image is called (ms-swift's image names vLLM)
    text = " ".join([container.get("image", ""), container.get("name", "")]).lower()
    if any(h in text for h in INFERENCE_HINTS):
        return "inference"
    if any(h in text for h in TRAINING_HINTS) or "Job" in owners:
        return "training"
    return "service"


def _seed(pod: Obj, container: str) -> int:
    text = f"{pod['metadata'].get('uid')}/{container}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")


def lines_between(
    pod: Obj, container: Obj, start: float, end: float, started: float | None = None
) -> list[tuple[float, str]]:
    """Every line the container wrote with start <= t < end (relative to its start time)."""
    if started is None:
        started = container_start(pod, container["name"])
    if started is None or end <= started:
        return []
    failure = image_contents.start_failure(container)  # it could not run its program
    if failure is not None:
        said = failure.log.splitlines() if failure.started else []
        return [(started, line) for line in said if start <= started < end]
    printed = s3_mounts.command_output(pod, container["name"])  # `cat` of a mounted object
    if printed is not None:
        return [(started, line) for line in printed.splitlines() if start <= started < end]
    from podplane_sandbox.kube.controllers import nccl  # it reads this module's annotations

    kind = kind_of(pod, container)
    if nccl.BUSBW in (pod["metadata"].get("annotations") or {}):
        out = nccl.lines(pod, started)
    elif kind.startswith("ray-"):  # KubeRay's head, workers and submitter (kuberay_logs.py)
        from podplane_sandbox.kube.controllers import kuberay_logs

        out = kuberay_logs.lines(pod, container, kind, started, start, end)
    elif kind == "training":
        out = _training(pod, container, started, start, end)
    elif kind == "inference":
        out = _inference(pod, container, started, start, end)
    else:
        out = _service(container, started, start, end)
    return [(t, line) for t, line in out if start <= t < end]


def run_window(pod: Obj, name: str, previous: bool = False) -> tuple[float, float | None] | None:
    """(started, finished or None while running) of the container's current or previous run.
    A container waiting to restart reports its last run, as the kubelet does."""
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        if cs.get("name") != name:
            continue
        state, last = cs.get("state") or {}, (cs.get("lastState") or {}).get("terminated")
        if previous:
            run = last
        elif "running" in state:
            return parse_iso(state["running"].get("startedAt")) or 0.0, None
        else:
            run = state.get("terminated") or last
        if run:
            return parse_iso(run.get("startedAt")) or 0.0, parse_iso(run.get("finishedAt"))
    return None


def container_start(pod: Obj, name: str) -> float | None:
    window = run_window(pod, name)
    return window[0] if window else None


def container_end(pod: Obj, name: str) -> float | None:
    window = run_window(pod, name)
    return window[1] if window else None


def _steps(started: float, start: float, end: float, every: float) -> range:
    first = max(0, math.ceil((start - started) / every))
    last = math.ceil((end - started) / every)
    return range(first, max(first, last))


def _training(
    pod: Obj, c: Obj, started: float, start: float, end: float
) -> list[tuple[float, str]]:
    seed = _seed(pod, c["name"])
    ann = pod["metadata"].get("annotations") or {}
    if LAUNCHER_ERROR in ann:  # the launcher stopped before any worker started
        return [(started, ann[LAUNCHER_ERROR])]
    rank, world = _rank_and_world(pod)
    out = [
        (started, f"[rank {rank}] initializing process group (backend=nccl, world_size={world})"),
        (started, f"[rank {rank}] NCCL INFO Using network AWS Libfabric (EFA)"),
        (started, f"[rank {rank}] loaded dataset shards, starting training"),
    ]
    base_tp = 1500 + seed % 500
    if HANG_AFTER in ann:
        end = min(end, started + float(ann[HANG_AFTER]))
    for i in _steps(started, start, end, TRAIN_EVERY):
        if i == 0:
            continue
        step = i * 10
        loss = 2.0 * math.exp(-step / 300) + 0.9 + ((seed >> (i % 24)) % 97) / 4000
        tput = base_tp + ((seed * (i + 3)) % 120) - 60
        out.append(
            (
                started + i * TRAIN_EVERY,
                f"[rank {rank}] step {step} | loss {loss:.4f} | throughput {tput:.1f} "
                f"samples/s | lr 3.0e-04",
            )
        )
    return out + _dying(pod, rank, started)


def _dying(pod: Obj, rank: str, started: float) -> list[tuple[float, str]]:
    """A crashing process's last lines, as PyTorch, NCCL or the GPU driver write them."""
    if CRASH not in (pod["metadata"].get("annotations") or {}):
        return []
    from podplane_sandbox.kube.controllers import kubelet, training_crashes

    seconds = kubelet.run_seconds(pod)
    if seconds is None:
        return []
    return training_crashes.crash_lines(pod, rank, started + seconds - 1e-3)


def _rank_and_world(pod: Obj) -> tuple[str, str]:
    """The first worker's global rank and the world size: from what the pod's launcher reads
    (launchers.py) or the operator's bookkeeping, else an indexed Job's completion index
    (of 8)."""
    ann = pod["metadata"].get("annotations") or {}
    if NODE_RANK in ann and ann.get(NPROC) is None:
        return ann[NODE_RANK] + ":0", "?"  # node rank:local rank; width set by the node
    found = ranks_of(pod)
    if found is not None:
        return str(found.first_rank), str(found.world)
    rank = (pod["metadata"].get("labels") or {}).get(
        "batch.kubernetes.io/job-completion-index", "0")
    return rank, "8"


def ranks_of(pod: Obj) -> launchers.Ranks | None:
    """Node rank, nodes and workers per node of the pod's first container: what the HyperPod
    operator recorded for its `hyperpodrun` (training_operator.py), else what the container's
    launcher reads from its environment (launchers.py)."""
    ann = pod["metadata"].get("annotations") or {}
    if NODE_RANK in ann:
        return launchers.Ranks(int(ann[NODE_RANK]), int(ann.get(NNODES, "1")),
                               int(ann.get(NPROC, "1")))
    containers = (pod.get("spec") or {}).get("containers") or []
    return launchers.ranks(containers[0]) if containers else None


def _inference(
    pod: Obj, c: Obj, started: float, start: float, end: float
) -> list[tuple[float, str]]:
    model = next(
        (
            e.get("value")
            for e in c.get("env") or []
            if e.get("name") in ("MODEL_ID", "MODEL_NAME", "HF_MODEL_ID")
        ),
        "meta-llama/Llama-3.1-8B-Instruct",
    )
    boot = [
        (0.0, "INFO Starting inference server"),
        (1.0, f"INFO Loading model {model}"),
        (4.0, "INFO Model weights loaded (15.0 GiB) in 3.0s"),
        (5.0, "INFO CUDA graphs captured; KV cache 71.2 GiB"),
        (6.0, "INFO Uvicorn running on http://0.0.0.0:8080"),
        (6.0, "INFO Application startup complete."),
    ]
    out = [(started + dt, line) for dt, line in boot]
    seed = _seed(pod, c["name"])
    for i in _steps(started, start, end, SERVE_EVERY):
        if i == 0:
            continue
        tps = 800 + (seed * (i + 1)) % 400
        out.append(
            (
                started + i * SERVE_EVERY,
                f"INFO metrics: running=4 waiting=0 generation_throughput={tps} tokens/s",
            )
        )
    return out + _dying(pod, "0", started)


def _service(c: Obj, started: float, start: float, end: float) -> list[tuple[float, str]]:
    out = [(started, f"starting {c.get('image', c['name'])}")]
    for i in _steps(started, start, end, 30.0):
        if i:
            out.append((started + i * 30.0, f"heartbeat {i}: ok"))
    return out


def render(lines: list[tuple[float, str]], timestamps: bool) -> str:
    if timestamps:
        return "".join(f"{iso(t)[:-1]}.000000000Z {line}\n" for t, line in lines)
    return "".join(f"{line}\n" for _, line in lines)
