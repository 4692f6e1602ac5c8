"""A training worker's last lines when it dies of a GPU or collective fault, written as the
real software writes them, so a diagnosis that reads the (previous) container's log meets the
real signatures. A pod opts in with the annotation CRASH (sandbox bookkeeping, set on the job's
pod template with kubectl like `hang-after-seconds`): the lines come at the container's end
(`duration-seconds`), and the container exits with `exit-code` (kubelet.py).

The formats, each from its source:
- `nccl_timeout`: PyTorch's ProcessGroupNCCL watchdog (torch/csrc/distributed/c10d/
  ProcessGroupNCCL.cpp, `WorkNCCL::checkTimeout`: "Watchdog caught collective operation
  timeout: WorkNCCL(SeqNum=.., OpType=.., NumelIn=.., NumelOut=.., Timeout(ms)=..) ran for ..
  milliseconds before timing out."), logged through c10's glog-style prefix
  (`[rank<r>]:[E<mmdd> <hh:mm:ss.micros> <tid> <file>:<line>]`); the watchdog thread then
  rethrows it and the process aborts (`terminate called after throwing an instance of
  'c10::DistBackendError'`, SIGABRT: exit code 134). The default timeout is 10 minutes
  (`init_process_group(timeout=)`), hence Timeout(ms)=600000.
- `nccl_error`: PyTorch's C10D_NCCL_CHECK (torch/csrc/distributed/c10d/NCCLUtils.hpp):
  "NCCL error in: <file>:<line>, <ncclGetErrorString>, NCCL version <v>", raised as
  torch.distributed.DistBackendError; NCCL's own warning line before it (NCCL's debug.cc
  `NCCL WARN` prefix, `<host>:<pid>:<tid> [<dev>] NCCL WARN ...`).
- `cuda_oom`: PyTorch's caching allocator (c10/cuda/CUDACachingAllocator.cpp), raised as
  torch.OutOfMemoryError: "CUDA out of memory. Tried to allocate .. GiB. GPU <i> has a total
  capacity of .. GiB of which .. GiB is free. ..."; exit code 1.
- `xid`: the NVIDIA driver's kernel message `NVRM: Xid (PCI:<domain:bus:dev>): <code>,
  pid=<pid>, name=<process>, <text>` (NVIDIA "Xid Errors" documentation; the same format
  AWS's GPU health checks parse: awslabs/awsome-distributed-training
  4.validation_and_observability/2.gpu-cluster-healthcheck/checks/0-nvidia-smi-check.sh).
  Xid 79 is "GPU has fallen off the bus". On a real node the line is in the kernel log
  (dmesg): a worker's log carries it only when the container reads the kernel log. The
  sandbox's worker prints it (as `dmesg` in a launcher's failure handler would) so the
  excerpt path is exercised; the HyperPod health agent's node labels stay the authoritative
  Xid signal. CUDA then fails the worker: "CUDA error: unspecified launch failure".
"""

from __future__ import annotations

import time
from typing import Any

from podplane_sandbox.kube.logs import CRASH  # nccl_timeout | nccl_error | cuda_oom | xid[:<code>]

Obj = dict[str, Any]
__all__ = ["CRASH", "crash_lines"]
TIMEOUT_MS = 600_000
XID_TEXT = {79: "GPU has fallen off the bus.", 48: "An uncorrectable double bit error (DBE) "
            "has been detected on GPU in the framebuffer at partition 0, subpartition 0.",
            74: "NVLink: fatal error detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, "
            "0x0)"}
SOURCE = "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp"


def _glog(t: float, rank: str, where: str) -> str:
    stamp = time.strftime("%m%d %H:%M:%S", time.gmtime(t))
    return f"[rank{rank}]:[E{stamp}.{int(t * 1e6) % 1_000_000:06d} 1187 {where}]"


def crash_lines(pod: Obj, rank: str, end: float) -> list[tuple[float, str]]:
    """The lines the worker writes as it dies at `end` (the container's finish)."""
    kind = ((pod["metadata"].get("annotations") or {}).get(CRASH) or "").strip()
    host = f"{pod['metadata']['name']}:31:1187"
    if kind == "nccl_timeout":
        work = (f"WorkNCCL(SeqNum=1532, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, "
                f"Timeout(ms)={TIMEOUT_MS}) ran for {TIMEOUT_MS + 44} milliseconds before "
                "timing out.")
        caught = f"[Rank {rank}] Watchdog caught collective operation timeout: {work}"
        return [(end, f"{_glog(end, rank, SOURCE + ':632')} {caught}"),
                (end, f"{_glog(end, rank, SOURCE + ':1664')} [PG ID 0 PG GUID 0(default_pg) "
                 f"Rank {rank}] Process group watchdog thread terminated with exception: "
                 f"{caught}"),
                (end, "terminate called after throwing an instance of 'c10::DistBackendError'")]
    if kind == "nccl_error":
        return [(end, f"{host} [0] NCCL WARN NET/OFI Request completed with error. RC: 12. "
                 "Error: 12 (Cannot allocate memory). Completed length: 0"),
                (end, f"torch.distributed.DistBackendError: NCCL error in: {SOURCE}:2006, "
                 "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL "
                 "version 2.21.5")]
    if kind == "cuda_oom":
        return [(end, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
                 "GPU 0 has a total capacity of 22.06 GiB of which 1.19 GiB is free. Including "
                 "non-PyTorch memory, this process has 20.86 GiB memory in use. Of the "
                 "allocated memory 19.50 GiB is allocated by PyTorch, and 1.02 GiB is reserved "
                 "by PyTorch but unallocated.")]
    if kind.startswith("xid"):
        code = int(kind.partition(":")[2] or 79)
        text = XID_TEXT.get(code, "Graphics Exception")
        uptime = f"[{end % 100000:12.6f}]"
        return [(end, f"{uptime} NVRM: Xid (PCI:0000:10:1c): {code}, pid=4321, name=python3, "
                 f"{text}"),
                (end, "RuntimeError: CUDA error: unspecified launch failure")]
    return []
